using System.Diagnostics;

namespace Manaloc.Lab.Harness;

/// <summary>Runs experiments, fills in ratios to the baseline and asks each for its verdict.</summary>
public static class ExperimentRunner
{
    /// <summary>Runs <paramref name="experiments"/> in order and returns the whole report.</summary>
    public static LabReport RunAll(IReadOnlyList<Experiment> experiments, RunSettings settings, ILabProgress? progress = null, CancellationToken cancellation = default)
    {
        progress ??= NullProgress.Instance;
        var started = DateTimeOffset.UtcNow;
        var results = new List<ExperimentResult>(experiments.Count);
        progress.RunStarted([.. experiments.Select(e => e.ExpectedSeconds(settings))]);
        for (int i = 0; i < experiments.Count; i++)
        {
            cancellation.ThrowIfCancellationRequested();
            progress.ExperimentStarted(experiments[i].Name, i, experiments.Count);
            var result = Run(experiments[i], settings, progress, cancellation);
            progress.ExperimentFinished(result);
            results.Add(result);
        }
        return new LabReport { StartedAt = started, Mode = settings.Mode, Machine = MachineInfo.Current(), Experiments = results };
    }

    /// <summary>Runs one experiment. A failure is caught and recorded in <see cref="ExperimentResult.Error"/>, never thrown.</summary>
    public static ExperimentResult Run(Experiment experiment, RunSettings settings, ILabProgress? progress = null, CancellationToken cancellation = default)
    {
        ArgumentNullException.ThrowIfNull(experiment);
        // An experiment may take fewer launches in quick mode; its launches and children are told the count it runs.
        settings = experiment.SettingsFor(settings);
        var context = new ExperimentContext(experiment.Name, settings, progress, cancellation);
        var runAt = DateTimeOffset.UtcNow;
        var stopwatch = Stopwatch.StartNew();
        string? error = null;
        var launches = new List<LaunchRun>();
        try
        {
            if (settings.Launches <= 1)
            {
                experiment.Run(context);
            }
            else
            {
                // Each launch runs the whole experiment, every variant, in a fresh process: one after another, never
                // side by side, so they do not compete for the cores they measure; quick launches that time nothing
                // (LaterQuickLaunchesTimeNothing) run side by side after the first, gathered in launch order.
                var timeout = TimeSpan.FromSeconds(Math.Max(120, 10 * experiment.ExpectedSeconds(settings)));
                bool laterTogether = settings.Mode == RunMode.Quick && experiment.LaterQuickLaunchesTimeNothing;
                for (int launch = 0; launch < settings.Launches; launch++)
                {
                    if (laterTogether && launch == 1)
                    {
                        foreach (var output in context.RunLaunchesTogether(1, settings.Launches - 1, timeout, experiment.LaunchEnvironment))
                        {
                            launches.Add(new LaunchRun(output.Measurements, output.Notes, output.Tables));
                        }
                        break;
                    }
                    var alone = context.RunLaunch(launch, timeout, experiment.LaunchEnvironment);
                    launches.Add(new LaunchRun(alone.Measurements, alone.Notes, alone.Tables));
                }
            }
        }
        catch (OperationCanceledException) when (cancellation.IsCancellationRequested)
        {
            throw;
        }
        catch (Exception e)
        {
            error = $"{e.GetType().Name}: {e.Message}";
        }
        // In this process, what was recorded before a failure is kept; from launches, what the finished ones sent back.
        var merged = settings.Launches <= 1 ? new LaunchRun(context.Measurements, context.Notes, context.Tables)
            : launches.Count == 0 ? new LaunchRun([], [], [])
            : Launches.Merge(launches);
        var measurements = WithRatios(merged.Measurements, experiment.Baseline);
        VerdictResult verdict;
        if (error is not null)
        {
            verdict = new VerdictResult(Verdict.NotComparable, $"The experiment failed: {error}");
        }
        else
        {
            try
            {
                verdict = experiment.Judge(measurements);
            }
            catch (Exception e)
            {
                verdict = new VerdictResult(Verdict.NotComparable, $"The verdict could not be formed: {e.Message}");
            }
        }
        HeadlineResult? headline = null;
        if (experiment.Headline is { } declared)
        {
            try
            {
                headline = error is null ? HeadlineResult.Evaluate(declared, measurements, Judgement.SeedOf(experiment.Name)) : HeadlineResult.NotMeasured(declared);
            }
            catch (Exception)
            {
                // A metric that cannot read a partial run's figures leaves the headline unmeasured, as the verdict does.
                headline = HeadlineResult.NotMeasured(declared);
            }
        }
        return new ExperimentResult
        {
            Experiment = experiment.Name,
            Article = experiment.Article,
            Description = experiment.Description,
            ArticleFigure = experiment.Figure,
            Baseline = experiment.Baseline,
            Variants = experiment.Variants,
            Parameters = experiment.DescribeParameters(settings),
            SweepParameter = experiment.SweepParameter,
            Measurements = measurements,
            Headline = headline,
            Verdict = verdict,
            Notes = merged.Notes.ToArray(),
            Tables = merged.Tables.ToArray(),
            Launches = settings.Launches <= 1 ? 1 : launches.Count,
            Error = error,
            ElapsedSeconds = stopwatch.Elapsed.TotalSeconds,
            RunAt = runAt,
            Mode = settings.Mode,
        };
    }

    /// <summary>
    /// Sets each measurement's ratio to the baseline variant's measurement with the same parameters,
    /// thread count and unit: this median divided by the baseline's, with its 95% bootstrap interval.
    /// No matching baseline, no ratio.
    /// </summary>
    public static IReadOnlyList<Measurement> WithRatios(IReadOnlyList<Measurement> measurements, string baseline)
    {
        var baselines = new Dictionary<(string, int, Unit), Measurement>();
        foreach (var m in measurements)
        {
            if (m.Variant == baseline) baselines.TryAdd((m.ParameterKey, m.Threads, m.Unit), m);
        }
        // Each ratio's interval is seeded by its measurement's index, so the measurements are estimated side by side on the
        // cores and in their order; no ratio reads the launches' own intervals, which only a verdict or a target needs.
        return measurements.Select((m, i) => (m, i)).AsParallel().AsOrdered().Select(item =>
        {
            var (m, i) = item;
            if (!baselines.TryGetValue((m.ParameterKey, m.Threads, m.Unit), out var b) || b.Statistics.Median == 0)
            {
                return m with { RatioToBaseline = null, RatioLow = null, RatioHigh = null };
            }
            if (ReferenceEquals(m, b)) return m with { RatioToBaseline = 1, RatioLow = 1, RatioHigh = 1 };
            var ratio = new Metric("ratio", Unit.Ratio, f => f.Median(m) / f.Median(b));
            var e = Judgement.EstimateAll([m, b], [ratio], seed: i + 1, perLaunch: false)[0];
            return m with { RatioToBaseline = m.Statistics.Median / b.Statistics.Median, RatioLow = e.Point is null ? null : e.Low, RatioHigh = e.Point is null ? null : e.High };
        }).ToArray();
    }
}
