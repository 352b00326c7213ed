namespace Manaloc.Lab.Harness;

/// <summary>
/// One of the project's own speed or memory targets (an issue's "at least 2x ArrayPool.Shared"), judged
/// on this run's figures: today's value beside the goal, and whether it was reached.
/// </summary>
/// <param name="Name">What is compared, e.g. "New+Delete vs AllocHGlobal+FreeHGlobal".</param>
/// <param name="Today">Today's figure; null when it could not be measured in this run.</param>
/// <param name="Comparison"><c>≥</c> when higher is better, <c>≤</c> when lower is better.</param>
/// <param name="Goal">The figure to reach.</param>
/// <param name="Unit">Unit of <paramref name="Today"/> and <paramref name="Goal"/>: <c>x</c> for a ratio, <c>ms</c>, <c>B</c> …</param>
public sealed record TargetResult(string Name, double? Today, string Comparison, double Goal, string Unit)
{
    /// <summary>
    /// Optional: the same figure from each variant's fastest sample (the least disturbed by other
    /// processes on a shared machine). Shown beside <see cref="Today"/>; <see cref="Met"/> judges the medians.
    /// </summary>
    public double? Best { get; init; }

    /// <summary>True when reached, false when not, null when <see cref="Today"/> is missing.</summary>
    public bool? Met => Today is not { } today || double.IsNaN(today) ? null : Comparison == "≥" ? today >= Goal : today <= Goal;

    /// <summary>A higher-is-better target: <paramref name="today"/> must be at least <paramref name="goal"/>.</summary>
    public static TargetResult AtLeast(string name, double? today, double goal, string unit = "x") => new(name, Clean(today), "≥", goal, unit);

    /// <summary>A lower-is-better target: <paramref name="today"/> must be at most <paramref name="goal"/>.</summary>
    public static TargetResult AtMost(string name, double? today, double goal, string unit = "x") => new(name, Clean(today), "≤", goal, unit);

    /// <summary>"1.2x (target ≥ 1.5x: not met)", for verdict texts.</summary>
    public override string ToString()
        => $"{Name} {TodayText()} (target {GoalText()}: {MetWord()})";

    /// <summary>Today's figure with its unit, or "n/a".</summary>
    public string TodayText() => Today is { } t ? Show(t) : "n/a";

    /// <summary><see cref="Best"/> with its unit, or "".</summary>
    public string BestText() => Best is { } b && double.IsFinite(b) ? Show(b) : "";

    /// <summary>"≥ 2x", "≤ 5 %".</summary>
    public string GoalText() => $"{Comparison} {Show(Goal)}";

    /// <summary>"met", "NOT met" or "not measured".</summary>
    public string MetWord() => Met switch { true => "met", false => "NOT met", null => "not measured" };

    private string Show(double value) => Unit == "x" ? Format.Ratio(value) : Format.Value(value, Unit);

    private static double? Clean(double? value) => value is { } v && (double.IsNaN(v) || double.IsInfinity(v)) ? null : value;
}
