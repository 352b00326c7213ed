namespace Manaloc.Lab.Harness;

/// <summary>
/// A figure computed from an experiment's measurements: its name as a reader sees it, its unit and how
/// it is computed. The harness evaluates it on the run's figures and on bootstrap replicates of them
/// (see <see cref="Figures"/>), which gives its confidence interval.
/// </summary>
/// <param name="Name">What the figure is, e.g. "EconomicResetEvent vs AutoResetEvent, Set+Wait on one thread".</param>
/// <param name="Unit">Its unit; <see cref="Unit.Ratio"/> for "times better".</param>
/// <param name="Compute">Computes it; null when the run did not measure what it needs.</param>
public sealed record Metric(string Name, Unit Unit, Func<Figures, double?> Compute)
{
    /// <summary>How many times better <paramref name="candidate"/> is than <paramref name="baseline"/> (by median; see <see cref="Figures.TimesBetter(string, string, Func{Measurement, bool}?)"/>).</summary>
    public static Metric TimesBetter(string name, string candidate, string baseline, Func<Measurement, bool>? where = null)
        => new(name, Unit.Ratio, f => f.TimesBetter(candidate, baseline, where));

    /// <summary>The median of the first measurement of <paramref name="variant"/> matching <paramref name="where"/>.</summary>
    public static Metric Median(string name, string variant, Unit unit, Func<Measurement, bool>? where = null)
        => new(name, unit, f => f.Median(variant, where));

    /// <summary>Evaluates the metric; NaN and infinities count as not measured.</summary>
    internal double? Evaluate(Figures figures)
    {
        double? value = Compute(figures);
        return value is { } v && double.IsFinite(v) ? v : null;
    }
}

/// <summary>
/// The article's claim as the harness judges it: the claim in the article's words, the article's
/// figure (in <see cref="Today"/>'s unit; null when it published none) and the metric that gives
/// today's counterpart. The effect must point the article's way when it is larger: a ratio above 1
/// ("times better"), or a positive amount.
/// </summary>
/// <param name="Text">The claim and its figure in words, e.g. "1,000,000 Set+WaitOne pairs: AutoResetEvent 1035 ms → EconomicResetEvent 9 ms".</param>
/// <param name="ArticleValue">The article's figure in <paramref name="Today"/>'s unit, or null when it gave none.</param>
/// <param name="Today">Today's counterpart.</param>
public sealed record Claim(string Text, double? ArticleValue, Metric Today)
{
    /// <summary>The article's figure as results.json records it.</summary>
    public ArticleFigure Figure => new(Text, ArticleValue, Today.Unit);
}

/// <summary>Which side of the goal a target's figure must be on.</summary>
public enum Comparator
{
    /// <summary>At least the goal (higher is better).</summary>
    AtLeast,
    /// <summary>At most the goal (lower is better).</summary>
    AtMost,
}

/// <summary>
/// A floor the lab measures in the same run (e.g. a presized array: only the copies left), against which a target's
/// candidate is judged when the target's own goal lies beyond what the floor allows: the candidate is "at the floor"
/// when it is within <paramref name="Tolerance"/> of it.
/// </summary>
/// <param name="Metric">
/// The candidate against the floor in the target's direction: for a higher-is-better target "times as fast" (1x = as
/// fast as the floor, which is never beaten by much); for a lower-is-better one "times as long" or "times as large"
/// (1x = the floor's figure, which the candidate never stays much below).
/// </param>
/// <param name="Tolerance">How far beyond the floor still counts as at it, e.g. 0.05 for "within 5% of the floor".</param>
/// <param name="Comparator">The target's direction, which the floor's figure shares.</param>
public sealed record Floor(Metric Metric, double Tolerance, Comparator Comparator = Comparator.AtLeast)
{
    /// <summary>
    /// The floor-relative goal: the candidate's figure against the floor must be at least 1 − <see cref="Tolerance"/>
    /// (higher is better) or at most 1 + <see cref="Tolerance"/> (lower is better).
    /// </summary>
    public double Goal => Comparator == Comparator.AtLeast ? 1 - Tolerance : 1 + Tolerance;
}

/// <summary>One of the project's own speed or memory targets for an experiment: a metric, a comparator and a goal.</summary>
/// <param name="Metric">What is compared.</param>
/// <param name="Comparator">Which side of the goal is good.</param>
/// <param name="Goal">The figure to reach, in the metric's unit.</param>
public sealed record Target(Metric Metric, Comparator Comparator, double Goal)
{
    /// <summary>
    /// The floor measured in the same run, when there is one: a target its goal misses is then "at the floor" (not
    /// missed) when the candidate is within the floor's tolerance of it. The goal against the anchor stays the target's
    /// figure; the floor's figure is reported beside it. Only for a floor the experiment measures, never to excuse a miss.
    /// </summary>
    public Floor? Floor { get; init; }

    /// <summary>
    /// This target, also judged against <paramref name="floor"/> (the candidate against a floor measured in the same run,
    /// in the target's direction: times as fast for a higher-is-better target, times as long or as large for a
    /// lower-is-better one) within <paramref name="tolerance"/>.
    /// </summary>
    public Target AgainstFloor(Metric floor, double tolerance = 0.05)
    {
        ArgumentNullException.ThrowIfNull(floor);
        if (tolerance is < 0 or >= 1) throw new ArgumentOutOfRangeException(nameof(tolerance), tolerance, "A floor's tolerance is a fraction from 0 to below 1.");
        return this with { Floor = new Floor(floor, tolerance, Comparator) };
    }

    /// <summary>The metric must reach at least <paramref name="goal"/>.</summary>
    public static Target AtLeast(Metric metric, double goal) => new(metric, Comparator.AtLeast, goal);

    /// <summary>The metric must stay at most <paramref name="goal"/>.</summary>
    public static Target AtMost(Metric metric, double goal) => new(metric, Comparator.AtMost, goal);

    /// <summary>A higher-is-better target on a computed figure.</summary>
    public static Target AtLeast(string name, Unit unit, Func<Figures, double?> compute, double goal) => new(new Metric(name, unit, compute), Comparator.AtLeast, goal);

    /// <summary>A lower-is-better target on a computed figure.</summary>
    public static Target AtMost(string name, Unit unit, Func<Figures, double?> compute, double goal) => new(new Metric(name, unit, compute), Comparator.AtMost, goal);
}
