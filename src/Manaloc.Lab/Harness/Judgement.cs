using System.Globalization;

namespace Manaloc.Lab.Harness;

/// <summary>
/// Judges an experiment's declared claim and targets on its measurements: every metric's point
/// estimate, its 95% percentile-bootstrap interval (hierarchical over launches, see <see cref="Figures"/>),
/// each launch's own figure and interval, the verdict (<see cref="VerdictRule"/>) and the verdict
/// sentence. Experiments never write a verdict sentence themselves.
/// </summary>
/// <remarks>
/// Two checks come before the rule. A figure measured once (one launch, one sample) has no interval, so it
/// is reported as measured and never judged. Launches that disagree beyond their own spread (each launch's
/// interval, judged alone, gives a different decisive answer and the intervals do not overlap) make the
/// verdict <see cref="Verdict.Unstable"/>: the process, not the code, decided the figure, and another run
/// could give the other side.
/// </remarks>
public static class Judgement
{
    /// <summary>Bootstrap replicates per judgement: enough for stable 2.5th and 97.5th percentiles.</summary>
    public const int Replicates = 1000;

    /// <summary>Bootstrap replicates for each launch's own interval (only compared, never reported as the figure).</summary>
    public const int LaunchReplicates = 400;

    /// <summary>A metric's estimate and interval; <see cref="Point"/> null when not measured.</summary>
    /// <param name="Point">The metric on the figures as measured.</param>
    /// <param name="Low">2.5th percentile of the replicates (the point when none is valid).</param>
    /// <param name="High">97.5th percentile of the replicates.</param>
    public readonly record struct Estimate(double? Point, double Low, double High)
    {
        /// <summary>True when every figure the metric read was measured once (one launch, one sample): no interval exists.</summary>
        public bool MeasuredOnce { get; init; }

        /// <summary>Each launch's own figure and interval, when the measurements came from two or more launches.</summary>
        public IReadOnlyList<LaunchEstimate>? Launches { get; init; }
    }

    /// <summary>Judges <paramref name="claim"/> and <paramref name="targets"/> on <paramref name="measurements"/>.</summary>
    /// <param name="seed">Seeds the resampling, so the same figures always give the same interval.</param>
    public static VerdictResult Judge(Claim? claim, IReadOnlyList<Target> targets, IReadOnlyList<Measurement> measurements, int seed)
    {
        ArgumentNullException.ThrowIfNull(targets);
        ArgumentNullException.ThrowIfNull(measurements);
        var metrics = new List<Metric>();
        if (claim is not null) metrics.Add(claim.Today);
        metrics.AddRange(targets.Select(t => t.Metric));
        // The floors' metrics after the targets', estimated on the same replicates.
        var floors = targets.Select(t => t.Floor).Where(f => f is not null).Select(f => f!.Metric).ToArray();
        metrics.AddRange(floors);
        var estimates = EstimateAll(measurements, metrics, seed);
        int first = claim is null ? 0 : 1, nextFloor = first + targets.Count;
        var targetResults = targets.Select((t, i) => ToResult(t, estimates[first + i], t.Floor is null ? null : estimates[nextFloor++])).ToArray();
        if (claim is null)
        {
            return new VerdictResult(Verdict.NotComparable, "The article makes no claim this lab can measure.") { Targets = targetResults };
        }
        var today = estimates[0];
        var metric = claim.Today;
        string article = claim.ArticleValue is { } a ? metric.Unit.Format(a) : "no figure";
        if (today.Point is not { } point)
        {
            return new VerdictResult(Verdict.NotComparable, $"{metric.Name}: not measured in this run; article: {article}.") { Targets = targetResults };
        }
        var result = new VerdictResult(Verdict.Measured, "", point, metric.Unit)
        {
            Metric = metric.Name,
            Low = today.Low,
            High = today.High,
            Targets = targetResults,
            Launches = today.Launches ?? [],
        };
        if (today.MeasuredOnce)
        {
            return result with { Text = $"{metric.Name}: {metric.Unit.Format(point)}; article: {article}; measured once, so there is no interval to judge." };
        }
        var decision = VerdictRule.Decide(metric.Unit, claim.ArticleValue, today.Low, today.High);
        string interval = today.Low == today.High ? "" : $" (95% CI {Format.Interval(today.Low, today.High, metric.Unit)})";
        var launches = today.Launches ?? [];
        if (Disagree(launches, l => Decisive(VerdictRule.Decide(metric.Unit, claim.ArticleValue, l.Low, l.High).Verdict)))
        {
            return result with
            {
                Verdict = Verdict.Unstable,
                Text = $"{metric.Name}: {metric.Unit.Format(point)}{interval}; article: {article}; unstable: the launches disagree beyond their own intervals ({DescribeLaunches(launches, metric.Unit, placement: true)}).",
            };
        }
        string perLaunch = launches.Count >= 2 ? $"; launches {DescribeLaunches(launches, metric.Unit, placement: false)}" : "";
        return result with { Verdict = decision.Verdict, Text = $"{metric.Name}: {metric.Unit.Format(point)}{interval}; article: {article}; {decision.Reason}{perLaunch}." };
    }

    /// <summary>
    /// True when two launches each give a decisive answer (<paramref name="answer"/> non-null), the answers differ
    /// and the launches' intervals do not overlap: they disagree beyond their own spread.
    /// </summary>
    public static bool Disagree(IReadOnlyList<LaunchEstimate> launches, Func<LaunchEstimate, object?> answer)
    {
        ArgumentNullException.ThrowIfNull(launches);
        ArgumentNullException.ThrowIfNull(answer);
        var decided = launches.Where(l => l.Point is not null).Select(l => (l, a: answer(l))).Where(x => x.a is not null).ToArray();
        for (int i = 0; i < decided.Length; i++)
        {
            for (int j = i + 1; j < decided.Length; j++)
            {
                var (x, y) = (decided[i].l, decided[j].l);
                if (!Equals(decided[i].a, decided[j].a) && (x.High < y.Low || y.High < x.Low)) return true;
            }
        }
        return false;
    }

    /// <summary>"0.6x (0.57x–0.65x) on CPUs 0|0 (one CPU); 2.7x (…) on CPUs 0|1", or, without placement, "0.6x, 2.7x, 2.6x".</summary>
    public static string DescribeLaunches(IReadOnlyList<LaunchEstimate> launches, Unit unit, bool placement)
    {
        ArgumentNullException.ThrowIfNull(launches);
        ArgumentNullException.ThrowIfNull(unit);
        if (!placement) return string.Join(", ", launches.Select(l => l.Point is { } p ? unit.Format(p) : "n/a"));
        return string.Join("; ", launches.Select(l =>
        {
            string figure = l.Point is { } p ? $"{unit.Format(p)} ({Format.Interval(l.Low, l.High, unit)})" : "n/a";
            return $"launch {(l.Launch + 1).ToString(CultureInfo.InvariantCulture)} {figure}{(l.Placement is { } where ? $" on {where}" : "")}";
        }));
    }

    /// <summary>Each metric's point estimate, 95% bootstrap interval (launches, then samples) and, unless
    /// <paramref name="perLaunch"/> is false, each launch's own.</summary>
    /// <remarks>
    /// The whole interval's replicates and each metric's per-launch replicates draw from random streams of their own
    /// (seeded from <paramref name="seed"/>), so they run side by side on the cores — nothing else runs while a finished
    /// experiment is judged — and give the same figures as one after another.
    /// </remarks>
    public static Estimate[] EstimateAll(IReadOnlyList<Measurement> measurements, IReadOnlyList<Metric> metrics, int seed, bool perLaunch = true)
    {
        ArgumentNullException.ThrowIfNull(measurements);
        ArgumentNullException.ThrowIfNull(metrics);
        var points = new double?[metrics.Count];
        var read = new IReadOnlyCollection<Measurement>[metrics.Count];
        for (int i = 0; i < metrics.Count; i++)
        {
            // One view per metric, so what each metric read is its own.
            var asMeasured = new Figures(measurements, random: null);
            points[i] = metrics[i].Evaluate(asMeasured);
            read[i] = asMeasured.Read;
        }
        var whole = Task.Run(() => Bootstrap(measurements, metrics, points, launch: null, Replicates, seed));
        var launches = new LaunchEstimate[metrics.Count][];
        try
        {
            Parallel.For(0, metrics.Count, i =>
            {
                int launchCount = read[i].Select(m => m.Launches.Count).DefaultIfEmpty(0).Max();
                launches[i] = perLaunch && points[i] is not null && launchCount >= 2 ? PerLaunch(measurements, metrics[i], read[i], launchCount, seed + i) : [];
            });
        }
        catch (AggregateException e) when (e.InnerExceptions.Count == 1)
        {
            // A metric that throws reads as it did one after another: its own exception, not the loop's wrapper.
            System.Runtime.ExceptionServices.ExceptionDispatchInfo.Throw(e.InnerExceptions[0]);
        }
        var replicates = whole.GetAwaiter().GetResult();
        var estimates = new Estimate[metrics.Count];
        for (int i = 0; i < metrics.Count; i++)
        {
            if (points[i] is not { } p)
            {
                estimates[i] = new Estimate(null, double.NaN, double.NaN) { Launches = [] };
                continue;
            }
            var (low, high) = Interval(p, replicates[i]);
            estimates[i] = new Estimate(p, low, high)
            {
                MeasuredOnce = read[i].Count > 0 && read[i].All(m => m.Statistics.Count <= 1 && m.Launches.Count <= 1),
                Launches = launches[i],
            };
        }
        return estimates;
    }

    /// <summary>A stable seed from an experiment's name (string hashes differ between processes).</summary>
    public static int SeedOf(string name)
    {
        ArgumentNullException.ThrowIfNull(name);
        uint hash = 2166136261;
        foreach (char c in name) hash = (hash ^ c) * 16777619;
        return (int)(hash & 0x7FFFFFFF);
    }

    private static object? Decisive(Verdict verdict) => verdict is Verdict.Holds or Verdict.Shrinks or Verdict.Reversed ? verdict : null;

    /// <summary>Each launch's figure, its interval from resampling that launch's samples alone, and where its threads ran.</summary>
    private static LaunchEstimate[] PerLaunch(IReadOnlyList<Measurement> measurements, Metric metric, IReadOnlyCollection<Measurement> read, int launchCount, int seed)
    {
        var result = new LaunchEstimate[launchCount];
        for (int launch = 0; launch < launchCount; launch++)
        {
            double? point = Evaluate(metric, new Figures(measurements, random: null, launch));
            double low = double.NaN, high = double.NaN;
            if (point is { } p)
            {
                var replicates = Bootstrap(measurements, [metric], [p], launch, LaunchReplicates, seed * 31 + launch);
                (low, high) = Interval(p, replicates[0]);
            }
            var placements = read
                .SelectMany(m => m.Launches.Where(l => l.Launch == launch && l.Placement is not null).Select(l => $"{m.Variant}: {l.Placement}"))
                .Distinct(StringComparer.Ordinal).ToArray();
            result[launch] = new LaunchEstimate(launch, point, low, high) { Placement = placements.Length == 0 ? null : string.Join(", ", placements) };
        }
        return result;
    }

    private static List<double>[] Bootstrap(IReadOnlyList<Measurement> measurements, IReadOnlyList<Metric> metrics, double?[] points, int? launch, int count, int seed)
    {
        // The rounds of measurements sampled in rounds are drawn from a stream of their own, so every other measurement's
        // draw is the same whether or not the run also holds measurements taken in rounds.
        var random = new Random(seed);
        var rounds = new Random(unchecked(seed * -1640531527) ^ 0x2545F491);
        var replicates = metrics.Select(_ => new List<double>(count)).ToArray();
        for (int r = 0; r < count && points.Any(p => p is not null); r++)
        {
            var figures = new Figures(measurements, random, launch, rounds);
            for (int i = 0; i < metrics.Count; i++)
            {
                if (points[i] is not null && Evaluate(metrics[i], figures) is { } v) replicates[i].Add(v);
            }
        }
        return replicates;
    }

    /// <summary>The metric on a view; null too when the view is one launch's and that launch did not record what the metric reads.</summary>
    private static double? Evaluate(Metric metric, Figures figures)
    {
        try
        {
            return metric.Evaluate(figures);
        }
        catch (Figures.MissingLaunchException)
        {
            return null;
        }
    }

    private static (double Low, double High) Interval(double point, List<double> replicates)
    {
        var sorted = replicates.ToArray();
        Array.Sort(sorted);
        // The point estimate always lies inside its interval, even when the replicates' percentiles miss it.
        double low = sorted.Length == 0 ? point : Math.Min(point, Statistics.Percentile(sorted, 0.025));
        double high = sorted.Length == 0 ? point : Math.Max(point, Statistics.Percentile(sorted, 0.975));
        return (low, high);
    }

    private static TargetResult ToResult(Target target, Estimate estimate, Estimate? floor)
    {
        string comparison = target.Comparator == Comparator.AtLeast ? "≥" : "≤";
        var launches = estimate.Launches ?? [];
        bool unstable = !estimate.MeasuredOnce && Disagree(launches, l => Side(target, l.Low, l.High));
        return new TargetResult(target.Metric.Name, estimate.Point, comparison, target.Goal, target.Metric.Unit)
        {
            Low = estimate.Point is null ? null : estimate.Low,
            High = estimate.Point is null ? null : estimate.High,
            MeasuredOnce = estimate.MeasuredOnce,
            Unstable = unstable,
            Launches = launches,
            Floor = target.Floor is { } f && floor is { } e
                ? new FloorResult(f.Metric.Name, e.Point, e.Point is null ? 0 : e.Low, e.Point is null ? 0 : e.High, f.Goal, comparison)
                : null,
        };
    }

    /// <summary>Met (true) or missed (false) by a launch's whole interval, or null when it straddles the goal.</summary>
    private static object? Side(Target target, double low, double high)
    {
        bool atLeast = target.Comparator == Comparator.AtLeast;
        if (atLeast ? low >= target.Goal : high <= target.Goal) return true;
        if (atLeast ? high < target.Goal : low > target.Goal) return false;
        return null;
    }
}

/// <summary>One launch's own figure of a metric, its interval from that launch's samples alone, and where its threads ran.</summary>
/// <param name="Launch">The launch, from 0.</param>
/// <param name="Point">The metric on this launch's figures; null when the launch did not measure it.</param>
/// <param name="Low">Low end of the launch's own 95% interval.</param>
/// <param name="High">High end of the launch's own 95% interval.</param>
public sealed record LaunchEstimate(int Launch, double? Point, double Low, double High)
{
    /// <summary>Where the threads of the measurements the metric read ran in this launch (e.g. "packed long[]: CPUs 0|1"); null when not recorded.</summary>
    public string? Placement { get; init; }
}
