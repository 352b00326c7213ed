namespace Manaloc.Lab.Harness;

/// <summary>
/// The lab's one verdict rule, the README's, applied to today's 95% confidence interval [low, high]
/// of the claim's metric:
/// <list type="bullet">
/// <item><b>holds</b> when low ≥ T, the threshold: half the article's effect;</item>
/// <item><b>reversed</b> when high is below the "other way" line;</item>
/// <item><b>shrinks</b> when high &lt; T (smaller, or gone);</item>
/// <item><b>inconclusive</b> when the interval straddles a line;</item>
/// <item><b>not comparable</b> when the metric was not measured.</item>
/// </list>
/// For a ratio ("times better") T = max(R/2, 1.1) with R the article's ratio (1.1 when it published no
/// number: the effect must at least be there), and "other way" is below 1/1.1. For an amount (bytes, ms)
/// T = A/2 with A the article's amount (any amount above 0 when it published none), and "other way" is
/// below 0. Only an interval that clears a line gives a verdict, so two runs of the same code agree
/// unless the machine changed under them.
/// </summary>
public static class VerdictRule
{
    /// <summary>The least ratio counted as an effect at all, and its reciprocal the least counted as a reversal.</summary>
    public const double MinimumRatio = 1.1;

    /// <summary>The verdict for an interval and the line that decided it (in the metric's unit).</summary>
    /// <param name="Verdict">The verdict.</param>
    /// <param name="Line">The threshold the interval was compared with.</param>
    /// <param name="Reason">Why, in words, with the line.</param>
    public readonly record struct Decision(Verdict Verdict, double Line, string Reason);

    /// <summary>Applies the rule to today's interval [<paramref name="low"/>, <paramref name="high"/>] of a metric in <paramref name="unit"/>.</summary>
    /// <exception cref="ArgumentException">The interval is reversed or not finite.</exception>
    public static Decision Decide(Unit unit, double? articleValue, double low, double high)
    {
        ArgumentNullException.ThrowIfNull(unit);
        if (!double.IsFinite(low) || !double.IsFinite(high) || low > high)
        {
            throw new ArgumentException($"[{low}, {high}] is not an interval.", nameof(low));
        }
        bool ratio = unit.Kind == UnitKind.Ratio;
        if (articleValue is { } a && (!double.IsFinite(a) || (ratio ? a <= 1 : a <= 0)))
        {
            return new(Verdict.NotComparable, double.NaN, $"the article's figure {unit.Format(a)} is not an effect in this metric's direction");
        }
        double holdsAt = ratio ? Math.Max(MinimumRatio, (articleValue ?? 0) / 2) : (articleValue ?? 0) / 2;
        double reversedBelow = ratio ? 1 / MinimumRatio : 0;
        string half = articleValue is null ? "the least effect counted" : "half the article's";
        if (articleValue is null && !ratio)
        {
            // No published amount: the effect is there when the whole interval is above zero.
            if (low > 0) return new(Verdict.Holds, 0, "the whole interval is above 0: the effect is there");
            if (high < 0) return new(Verdict.Reversed, 0, "the whole interval is below 0: the other way today");
            if (high == 0) return new(Verdict.Shrinks, 0, "the whole interval is at 0: the effect is gone");
            return new(Verdict.Inconclusive, 0, "the interval includes 0");
        }
        if (low >= holdsAt) return new(Verdict.Holds, holdsAt, $"the whole interval is at or above {unit.Format(holdsAt)}, {half}");
        if (high < reversedBelow) return new(Verdict.Reversed, reversedBelow, $"the whole interval is below {unit.Format(reversedBelow)}: the other way today");
        if (high < holdsAt) return new(Verdict.Shrinks, holdsAt, $"the whole interval is below {unit.Format(holdsAt)}, {half}");
        return low < reversedBelow
            ? new(Verdict.Inconclusive, reversedBelow, $"the interval straddles {unit.Format(reversedBelow)}")
            : new(Verdict.Inconclusive, holdsAt, $"the interval straddles {unit.Format(holdsAt)}, {half}");
    }
}
