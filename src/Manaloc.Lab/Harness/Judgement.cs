namespace Manaloc.Lab.Harness;

/// <summary>
/// Judges an experiment's declared claim and targets on its measurements: every metric's point
/// estimate, its 95% percentile-bootstrap interval, the verdict (<see cref="VerdictRule"/>) and the
/// verdict sentence. Experiments never write a verdict sentence themselves.
/// </summary>
public static class Judgement
{
    /// <summary>Bootstrap replicates per judgement: enough for stable 2.5th and 97.5th percentiles.</summary>
    public const int Replicates = 1000;

    /// <summary>A metric's estimate and interval; <see cref="Point"/> null when not measured.</summary>
    /// <param name="Point">The metric on the figures as measured.</param>
    /// <param name="Low">2.5th percentile of the replicates (the point when none is valid).</param>
    /// <param name="High">97.5th percentile of the replicates.</param>
    public readonly record struct Estimate(double? Point, double Low, double High);

    /// <summary>Judges <paramref name="claim"/> and <paramref name="targets"/> on <paramref name="measurements"/>.</summary>
    /// <param name="seed">Seeds the resampling, so the same figures always give the same interval.</param>
    public static VerdictResult Judge(Claim? claim, IReadOnlyList<Target> targets, IReadOnlyList<Measurement> measurements, int seed)
    {
        ArgumentNullException.ThrowIfNull(targets);
        ArgumentNullException.ThrowIfNull(measurements);
        var metrics = new List<Metric>();
        if (claim is not null) metrics.Add(claim.Today);
        metrics.AddRange(targets.Select(t => t.Metric));
        var estimates = EstimateAll(measurements, metrics, seed);
        var targetResults = targets.Select((t, i) => ToResult(t, estimates[i + (claim is null ? 0 : 1)])).ToArray();
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
        var decision = VerdictRule.Decide(metric.Unit, claim.ArticleValue, today.Low, today.High);
        string interval = today.Low == today.High ? "" : $" (95% CI {Format.Interval(today.Low, today.High, metric.Unit)})";
        return new VerdictResult(decision.Verdict, $"{metric.Name}: {metric.Unit.Format(point)}{interval}; article: {article}; {decision.Reason}.", point, metric.Unit)
        {
            Metric = metric.Name,
            Low = today.Low,
            High = today.High,
            Targets = targetResults,
        };
    }

    /// <summary>Each metric's point estimate and 95% percentile-bootstrap interval.</summary>
    public static Estimate[] EstimateAll(IReadOnlyList<Measurement> measurements, IReadOnlyList<Metric> metrics, int seed)
    {
        ArgumentNullException.ThrowIfNull(measurements);
        ArgumentNullException.ThrowIfNull(metrics);
        var asMeasured = new Figures(measurements, random: null);
        var points = metrics.Select(m => m.Evaluate(asMeasured)).ToArray();
        var replicates = metrics.Select(_ => new List<double>(Replicates)).ToArray();
        var random = new Random(seed);
        for (int r = 0; r < Replicates && points.Any(p => p is not null); r++)
        {
            var figures = new Figures(measurements, random);
            for (int i = 0; i < metrics.Count; i++)
            {
                if (points[i] is not null && metrics[i].Evaluate(figures) is { } v) replicates[i].Add(v);
            }
        }
        var estimates = new Estimate[metrics.Count];
        for (int i = 0; i < metrics.Count; i++)
        {
            if (points[i] is not { } p)
            {
                estimates[i] = new Estimate(null, double.NaN, double.NaN);
                continue;
            }
            var sorted = replicates[i].ToArray();
            Array.Sort(sorted);
            // The point estimate always lies inside its interval, even when the replicates' percentiles miss it.
            double low = sorted.Length == 0 ? p : Math.Min(p, Statistics.Percentile(sorted, 0.025));
            double high = sorted.Length == 0 ? p : Math.Max(p, Statistics.Percentile(sorted, 0.975));
            estimates[i] = new Estimate(p, low, high);
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

    private static TargetResult ToResult(Target target, Estimate estimate)
    {
        string comparison = target.Comparator == Comparator.AtLeast ? "≥" : "≤";
        return new TargetResult(target.Metric.Name, estimate.Point, comparison, target.Goal, target.Metric.Unit)
        {
            Low = estimate.Point is null ? null : estimate.Low,
            High = estimate.Point is null ? null : estimate.High,
        };
    }
}
