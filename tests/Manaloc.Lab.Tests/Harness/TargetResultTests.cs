using Manaloc.Lab.Harness;
using Manaloc.Lab.Reporting;

namespace Manaloc.Lab.Tests.Harness;

public sealed class TargetResultTests
{
    [Theory]
    [InlineData(3.0, 3.0, true)]
    [InlineData(2.99, 3.0, false)]
    [InlineData(10.0, 3.0, true)]
    public void At_least_is_met_from_the_goal_up(double today, double goal, bool met)
        => Assert.Equal(met, TargetResult.AtLeast("x", today, goal).Met);

    [Theory]
    [InlineData(1.3, 1.3, true)]
    [InlineData(1.31, 1.3, false)]
    [InlineData(0.5, 1.3, true)]
    public void At_most_is_met_from_the_goal_down(double today, double goal, bool met)
        => Assert.Equal(met, TargetResult.AtMost("x", today, goal).Met);

    [Fact]
    public void A_missing_or_undefined_figure_is_not_measured_rather_than_failed()
    {
        Assert.Null(TargetResult.AtLeast("x", null, 2).Met);
        Assert.Null(TargetResult.AtLeast("x", double.NaN, 2).Met);
        Assert.Null(TargetResult.AtMost("x", double.PositiveInfinity, 2).Today);
        Assert.Equal("not measured", TargetResult.AtLeast("x", null, 2).MetWord());
    }

    [Fact]
    public void Text_shows_today_the_goal_and_the_judgement()
    {
        Assert.Equal("slab vs malloc 2.3x (target ≥ 2x: met)", TargetResult.AtLeast("slab vs malloc", 2.3, 2).ToString());
        Assert.Equal("first New 7 ms (target ≤ 5 ms: NOT met)", TargetResult.AtMost("first New", 7, 5, "ms").ToString());
    }

    [Fact]
    public void Summary_counts_met_targets_and_says_which_were_not_measured()
    {
        var verdict = new VerdictResult(Verdict.Holds, "t")
        {
            Targets = [TargetResult.AtLeast("a", 3, 2), TargetResult.AtLeast("b", 1, 2), TargetResult.AtMost("c", null, 1)],
        };
        Assert.Equal("1 of 3 met (1 not measured)", MarkdownReport.TargetCount(verdict));
        var straddling = verdict with { Targets = [.. verdict.Targets, TargetResult.AtLeast("d", 2, 2) with { Low = 1.5, High = 2.5 }] };
        Assert.Equal("1 of 4 met (1 inconclusive, 1 not measured)", MarkdownReport.TargetCount(straddling));
        Assert.Equal("—", MarkdownReport.TargetCount(new VerdictResult(Verdict.Holds, "t")));
    }
}
