namespace Manaloc.Lab.Harness;

/// <summary>
/// One of the project's own speed or memory targets (an issue's "at least 2x ArrayPool.Shared"), judged
/// on this run's figures: today's value and its confidence interval beside the goal, and whether it was reached.
/// </summary>
/// <param name="Name">What is compared, e.g. "New+Delete vs AllocHGlobal+FreeHGlobal".</param>
/// <param name="Today">Today's figure; null when it could not be measured in this run.</param>
/// <param name="Comparison"><c>≥</c> when higher is better, <c>≤</c> when lower is better.</param>
/// <param name="Goal">The figure to reach.</param>
/// <param name="Unit">Unit of <paramref name="Today"/> and <paramref name="Goal"/>: <c>x</c> for a ratio, <c>ms</c>, <c>B</c> …</param>
public sealed record TargetResult(string Name, double? Today, string Comparison, double Goal, Unit Unit)
{
    /// <summary>
    /// Optional: the same figure from each variant's fastest sample (the least disturbed by other
    /// processes on a shared machine). Shown beside <see cref="Today"/>; <see cref="Met"/> judges the medians.
    /// </summary>
    public double? Best { get; init; }

    /// <summary>Low end of today's 95% bootstrap confidence interval; null when not computed.</summary>
    public double? Low { get; init; }

    /// <summary>High end of today's 95% bootstrap confidence interval; null when not computed.</summary>
    public double? High { get; init; }

    /// <summary>True when the figure was measured once (one launch, one sample): it is reported, never met or missed.</summary>
    public bool MeasuredOnce { get; init; }

    /// <summary>True when the launches disagree beyond their own intervals: one met the goal, another missed it.</summary>
    public bool Unstable { get; init; }

    /// <summary>Each launch's own figure, side by side; empty when the run had one launch.</summary>
    public IReadOnlyList<LaunchEstimate> Launches { get; init; } = [];

    /// <summary>The candidate against a floor measured in the same run, when the target declares one; null otherwise.</summary>
    public FloorResult? Floor { get; init; }

    /// <summary>
    /// True when reached, false when missed, null when not measured, measured once, unstable, at the floor, or when
    /// the confidence interval straddles the goal (inconclusive). With an interval, the whole interval must be on one side.
    /// </summary>
    public bool? Met
    {
        get
        {
            bool? side = GoalSide();
            return side == false && AtFloor ? null : side;
        }
    }

    /// <summary>
    /// True when the goal was not reached but the candidate is at the floor measured in the same run: the whole
    /// interval of its figure against the floor is within the floor's tolerance. The goal's figure stays <see cref="Today"/>.
    /// </summary>
    public bool AtFloor => GoalSide() != true && Today is not null && !MeasuredOnce && Floor is { Reached: true };

    private bool? GoalSide()
    {
        if (Today is not { } today || double.IsNaN(today) || MeasuredOnce || Unstable) return null;
        double low = Low ?? today, high = High ?? today;
        bool atLeast = Comparison == "≥";
        if (atLeast ? low >= Goal : high <= Goal) return true;
        if (atLeast ? high < Goal : low > Goal) return false;
        return null;
    }

    /// <summary>A higher-is-better target: <paramref name="today"/> must be at least <paramref name="goal"/>.</summary>
    public static TargetResult AtLeast(string name, double? today, double goal, Unit? unit = null) => new(name, Clean(today), "≥", goal, unit ?? Unit.Ratio);

    /// <summary>A lower-is-better target: <paramref name="today"/> must be at most <paramref name="goal"/>.</summary>
    public static TargetResult AtMost(string name, double? today, double goal, Unit? unit = null) => new(name, Clean(today), "≤", goal, unit ?? Unit.Ratio);

    /// <summary>"1.2x (target ≥ 1.5x: not met)", for verdict texts; with a floor, its figure and goal too.</summary>
    public override string ToString()
        => $"{Name} {TodayText()}{FloorFigureText()} (target {GoalText()}{FloorGoalText()}: {MetWord()})";

    /// <summary>"; against the floor 0.98x (95% CI 0.96x–1x)", or "" without a floor.</summary>
    public string FloorFigureText() => Floor is { } f ? $"; against the floor {f.FigureText()}" : "";

    /// <summary>", or at the floor (≥ 0.95x of it)" (lower is better: "≤ 1.05x"), or "" without a floor.</summary>
    public string FloorGoalText() => Floor is { } f ? $", or at the floor ({f.Comparison} {Unit.Ratio.Format(f.Goal)} of it)" : "";

    /// <summary>Today's figure with its unit and interval, or "n/a".</summary>
    public string TodayText() => Today is not { } t ? "n/a"
        : Low is { } l && High is { } h && l != h ? $"{Unit.Format(t)} (95% CI {Format.Interval(l, h, Unit)}){LaunchText()}" : Unit.Format(t) + LaunchText();

    /// <summary>The launches' figures side by side when they disagree ("; launches 1.2x (1.1x–1.3x) on CPUs 0|1; …"), else "".</summary>
    private string LaunchText() => Unstable ? $"; launches {Judgement.DescribeLaunches(Launches, Unit, placement: true)}" : "";

    /// <summary><see cref="Best"/> with its unit, or "".</summary>
    public string BestText() => Best is { } b && double.IsFinite(b) ? Unit.Format(b) : "";

    /// <summary>"≥ 2x", "≤ 5 %".</summary>
    public string GoalText() => $"{Comparison} {Unit.Format(Goal)}";

    /// <summary>"met", "at the floor", "NOT met", "inconclusive", "unstable", "measured" (once, not judged) or "not measured".</summary>
    public string MetWord() => AtFloor ? "at the floor" : Met switch
    {
        true => "met",
        false => "NOT met",
        null => Today is null ? "not measured" : MeasuredOnce ? "measured" : Unstable ? "unstable" : "inconclusive",
    };

    private static double? Clean(double? value) => value is { } v && (double.IsNaN(v) || double.IsInfinity(v)) ? null : value;
}

/// <summary>
/// A target's candidate against a floor the lab measured in the same run (e.g. a presized array), in the target's
/// direction: "times as fast" for a higher-is-better target (1x is as fast as the floor; at the floor when the whole
/// interval is at or above <see cref="Goal"/>), "times as long" or "as large" for a lower-is-better one (1x is the
/// floor's figure; at the floor when the whole interval is at or below <see cref="Goal"/>).
/// </summary>
/// <param name="Name">What is compared, e.g. "PooledBufferStream vs the floor (a reused presized array), 1 MiB".</param>
/// <param name="Today">Today's figure; null when not measured.</param>
/// <param name="Low">Low end of its 95% interval.</param>
/// <param name="High">High end of its 95% interval.</param>
/// <param name="Goal">1 minus the tolerance (higher is better: "within 5% of the floor" is 0.95), or 1 plus it (lower is better: 1.05).</param>
/// <param name="Comparison"><c>≥</c> when higher is better, <c>≤</c> when lower is better: the target's own.</param>
public sealed record FloorResult(string Name, double? Today, double Low, double High, double Goal, string Comparison = "≥")
{
    /// <summary>True when the whole interval is on <see cref="Goal"/>'s good side (at or above it, or at or below it when lower is better); false when measured and not; null when not measured.</summary>
    public bool? Reached => Today is null ? null : Comparison == "≤" ? High <= Goal : Low >= Goal;

    /// <summary>"0.98x (95% CI 0.96x–1x)", or "n/a".</summary>
    public string FigureText() => Today is not { } today ? "n/a"
        : Low != High ? $"{Unit.Ratio.Format(today)} (95% CI {Format.Interval(Low, High, Unit.Ratio)})" : Unit.Ratio.Format(today);
}
