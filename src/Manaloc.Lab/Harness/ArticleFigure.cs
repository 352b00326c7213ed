namespace Manaloc.Lab.Harness;

/// <summary>The figure an article published, to be set beside today's.</summary>
/// <param name="Text">The claim in words, e.g. "1,000,000 Set+Wait pairs: 1035 ms → 9 ms".</param>
/// <param name="Value">The number that the verdict compares, where the article gives one.</param>
/// <param name="Unit">Unit of <paramref name="Value"/>, e.g. <c>x</c> for a ratio, <c>B/call</c>.</param>
public sealed record ArticleFigure(string Text, double? Value = null, Unit? Unit = null);

/// <summary>How today's run stands against the article's claim (the rule: <see cref="VerdictRule"/>).</summary>
public enum Verdict
{
    /// <summary>The effect is there today, at least half as large as published.</summary>
    Holds,
    /// <summary>Same direction, but less than half the published effect (or none at all).</summary>
    Shrinks,
    /// <summary>Today the effect points the other way.</summary>
    Reversed,
    /// <summary>No like-for-like comparison is possible (no published number, different measure, or the run failed).</summary>
    NotComparable,
    /// <summary>Today's confidence interval straddles a threshold of the rule: this run cannot tell.</summary>
    Inconclusive,
    /// <summary>The launches disagree beyond their own intervals (one side in one process, the other in another): the process decides, not the code.</summary>
    Unstable,
    /// <summary>The figure was measured once (one launch, one sample): it has no interval, so it is reported and not judged.</summary>
    Measured,
}

/// <summary>The verdict and today's figure in words and as a number.</summary>
/// <param name="Verdict">The verdict.</param>
/// <param name="Text">Why, in one line, with today's figure.</param>
/// <param name="TodayValue">Today's counterpart of <see cref="ArticleFigure.Value"/>.</param>
/// <param name="TodayUnit">Unit of <paramref name="TodayValue"/>.</param>
public sealed record VerdictResult(Verdict Verdict, string Text, double? TodayValue = null, Unit? TodayUnit = null)
{
    /// <summary>The name of the metric <see cref="TodayValue"/> measures; null for a verdict not formed from a declared claim.</summary>
    public string? Metric { get; init; }

    /// <summary>Low end of today's 95% bootstrap confidence interval; null when not computed.</summary>
    public double? Low { get; init; }

    /// <summary>High end of today's 95% bootstrap confidence interval; null when not computed.</summary>
    public double? High { get; init; }

    /// <summary>The project's own targets for this experiment (from its issue), judged on this run; empty when it has none.</summary>
    public IReadOnlyList<TargetResult> Targets { get; init; } = [];

    /// <summary>Each launch's own figure of the claim's metric, side by side; empty when the run had one launch.</summary>
    public IReadOnlyList<LaunchEstimate> Launches { get; init; } = [];

    /// <summary>
    /// Judges a "candidate is <paramref name="articleRatio"/>× better than baseline" claim from a single
    /// ratio with no interval (the interval is then that one point): <see cref="VerdictRule"/>.
    /// </summary>
    public static Verdict FromRatios(double articleRatio, double todayRatio)
        => double.IsNaN(todayRatio) || double.IsNaN(articleRatio) || articleRatio <= 0
            ? Verdict.NotComparable
            : VerdictRule.Decide(Unit.Ratio, articleRatio, todayRatio, todayRatio).Verdict;
}
