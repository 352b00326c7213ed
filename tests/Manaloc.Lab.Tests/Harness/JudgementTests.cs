using Manaloc.Lab.Experiments;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Harness;

public sealed class JudgementTests
{
    [Theory]
    [InlineData(10.0, 6.0, 7.0, Verdict.Holds)]         // whole interval ≥ 5x, half the article's 10x
    [InlineData(10.0, 4.0, 6.0, Verdict.Inconclusive)]  // straddles 5x
    [InlineData(10.0, 2.0, 4.9, Verdict.Shrinks)]
    [InlineData(10.0, 0.5, 0.8, Verdict.Reversed)]
    [InlineData(10.0, 0.8, 1.2, Verdict.Shrinks)]       // below 5x, not clearly the other way: gone
    [InlineData(1.5, 1.12, 1.3, Verdict.Holds)]         // the line is never below 1.1x
    [InlineData(1.5, 1.05, 1.3, Verdict.Inconclusive)]
    public void The_rule_needs_the_whole_interval_on_one_side_of_a_ratio_line(double article, double low, double high, Verdict expected)
        => Assert.Equal(expected, VerdictRule.Decide(Unit.Ratio, article, low, high).Verdict);

    [Theory]
    [InlineData(32.0, 16.0, 20.0, Verdict.Holds)]
    [InlineData(32.0, 0.0, 0.0, Verdict.Shrinks)]
    [InlineData(32.0, 10.0, 20.0, Verdict.Inconclusive)]
    [InlineData(-1.0, 10.0, 20.0, Verdict.NotComparable)]  // an article figure against the metric's direction
    public void Amounts_are_judged_against_half_the_article_amount(double article, double low, double high, Verdict expected)
        => Assert.Equal(expected, VerdictRule.Decide(Unit.BytesPerCall, article, low, high).Verdict);

    [Theory]
    [InlineData(0.5, 1.0, Verdict.Holds)]
    [InlineData(0.0, 0.0, Verdict.Shrinks)]
    [InlineData(0.0, 1.0, Verdict.Inconclusive)]
    public void With_no_published_amount_the_effect_must_be_there_at_all(double low, double high, Verdict expected)
        => Assert.Equal(expected, VerdictRule.Decide(Unit.Bytes, null, low, high).Verdict);

    [Fact]
    public void A_clear_difference_gives_a_verdict_with_its_interval_in_the_sentence()
    {
        var ms = new[] { Ns("old", 100, 0.02), Ns("new", 10, 0.02) };
        var claim = new Claim("old 100 ns → new 1 ns", 100, Metric.TimesBetter("new vs old", "new", "old"));
        var verdict = Judgement.Judge(claim, [], ms, seed: 1);

        Assert.Equal(Verdict.Shrinks, verdict.Verdict); // 10x is less than half of 100x, and the interval shows it
        Assert.InRange(verdict.TodayValue!.Value, 9.99, 10.01);
        Assert.True(verdict.Low <= verdict.TodayValue && verdict.TodayValue <= verdict.High);
        Assert.True(verdict.High < 50);
        Assert.Contains("new vs old: 10", verdict.Text, StringComparison.Ordinal);
        Assert.Contains("95% CI", verdict.Text, StringComparison.Ordinal);
        Assert.Contains("article: 100x", verdict.Text, StringComparison.Ordinal);
    }

    [Fact]
    public void Overlapping_noisy_samples_are_inconclusive_not_a_coin_toss()
    {
        // Two variants whose samples overlap heavily: the ratio of medians is near 1.2x, its interval spans 1.1x.
        var ms = new[] { Spread("old", 12, 0.5), Spread("new", 10, 0.5) };
        var claim = new Claim("old → new, no figure", null, Metric.TimesBetter("new vs old", "new", "old"));
        var verdict = Judgement.Judge(claim, [], ms, seed: 7);

        Assert.Equal(Verdict.Inconclusive, verdict.Verdict);
        Assert.True(verdict.Low < VerdictRule.MinimumRatio && verdict.High > VerdictRule.MinimumRatio);
        Assert.Contains("straddles", verdict.Text, StringComparison.Ordinal);
    }

    [Fact]
    public void The_same_figures_always_give_the_same_interval()
    {
        var ms = new[] { Spread("old", 12, 0.3), Spread("new", 10, 0.3) };
        var metric = Metric.TimesBetter("new vs old", "new", "old");
        var a = Judgement.EstimateAll(ms, [metric], Judgement.SeedOf("demo"))[0];
        var b = Judgement.EstimateAll(ms, [metric], Judgement.SeedOf("demo"))[0];
        Assert.Equal(a, b);
        Assert.True(a.Low < a.Point && a.Point < a.High);
    }

    [Fact]
    public void A_target_whose_interval_straddles_the_goal_is_inconclusive_and_one_not_measured_says_so()
    {
        var ms = new[] { Spread("old", 12, 0.5), Spread("new", 10, 0.5) };
        var verdict = Judgement.Judge(null, [
            Target.AtLeast(Metric.TimesBetter("new vs old", "new", "old"), 1.2),
            Target.AtLeast(Metric.TimesBetter("missing vs old", "missing", "old"), 1),
            Target.AtLeast(Metric.TimesBetter("new vs old, loose goal", "new", "old"), 0.5),
        ], ms, seed: 3);

        Assert.Equal(Verdict.NotComparable, verdict.Verdict);
        Assert.Null(verdict.Targets[0].Met);
        Assert.Equal("inconclusive", verdict.Targets[0].MetWord());
        Assert.Equal("not measured", verdict.Targets[1].MetWord());
        Assert.True(verdict.Targets[2].Met);
        Assert.Contains("95% CI", verdict.Targets[0].TodayText(), StringComparison.Ordinal);
    }

    [Fact]
    public void A_goal_the_floor_itself_misses_reads_at_the_floor_when_the_candidate_is_within_its_tolerance()
    {
        // The anchor at 11 ns, the floor at 10 ns: no candidate can be 1.2x the anchor. The candidate at 10.1 ns is at the floor.
        var ms = new[] { Spread("anchor", 11, 0.05), Spread("floor", 10, 0.05), Spread("near", 10.1, 0.05), Spread("far", 10.9, 0.05) };
        var verdict = Judgement.Judge(null, [
            Target.AtLeast(Metric.TimesBetter("near vs anchor", "near", "anchor"), 1.2).AgainstFloor(Metric.TimesBetter("near vs floor", "near", "floor")),
            Target.AtLeast(Metric.TimesBetter("far vs anchor", "far", "anchor"), 1.2).AgainstFloor(Metric.TimesBetter("far vs floor", "far", "floor")),
            Target.AtLeast(Metric.TimesBetter("near vs anchor, reachable", "near", "anchor"), 1.05).AgainstFloor(Metric.TimesBetter("near vs floor", "near", "floor")),
        ], ms, seed: 5);

        var near = verdict.Targets[0];
        Assert.True(near.AtFloor);
        Assert.Null(near.Met);
        Assert.Equal("at the floor", near.MetWord());
        Assert.InRange(near.Today!.Value, 1.05, 1.15); // the ratio against the anchor stays the target's figure
        Assert.NotNull(near.Floor);
        Assert.InRange(near.Floor!.Today!.Value, 0.97, 1.0);
        Assert.Contains("against the floor", near.ToString(), StringComparison.Ordinal);

        var far = verdict.Targets[1];
        Assert.False(far.AtFloor); // 0.92x the floor: more than 5% below it
        Assert.False(far.Met);
        Assert.Equal("NOT met", far.MetWord());

        Assert.True(verdict.Targets[2].Met); // a goal met is met, floor or not
        Assert.False(verdict.Targets[2].AtFloor);
        Assert.Equal("1 of 3 met (1 at the floor)", Manaloc.Lab.Reporting.MarkdownReport.TargetCount(verdict));
    }

    [Fact]
    public void A_lower_is_better_target_reads_at_the_floor_when_the_candidate_is_within_its_tolerance_above_it()
    {
        // Times (lower is better): the anchor at 100 ms, the floor at 2 ms. No candidate can be at most 0.01x the anchor
        // (1 ms); the candidate at 2.05 ms is at the floor (1.025x it, within 5%), the one at 3 ms is not (1.5x).
        var ms = new[] { Spread("anchor", 100, 0.05), Spread("floor", 2, 0.05), Spread("near", 2.05, 0.05), Spread("far", 3, 0.05) };
        static Metric Share(string candidate, string of) => new($"{candidate} ÷ {of}", Unit.Ratio, f => f.Median(candidate) / f.Median(of));
        var verdict = Judgement.Judge(null, [
            Target.AtMost(Share("near", "anchor"), 0.01).AgainstFloor(Share("near", "floor")),
            Target.AtMost(Share("far", "anchor"), 0.01).AgainstFloor(Share("far", "floor")),
            Target.AtMost(Share("near", "anchor"), 0.05).AgainstFloor(Share("near", "floor")),
        ], ms, seed: 5);

        var near = verdict.Targets[0];
        Assert.True(near.AtFloor);
        Assert.Null(near.Met);
        Assert.Equal("at the floor", near.MetWord());
        Assert.InRange(near.Today!.Value, 0.019, 0.022); // the share of the anchor stays the target's figure
        Assert.Equal("≤", near.Floor!.Comparison);
        Assert.Equal(1.05, near.Floor.Goal, precision: 12);
        Assert.InRange(near.Floor.High, 1.0, 1.05);
        Assert.Contains("or at the floor (≤ 1.05x of it)", near.ToString(), StringComparison.Ordinal);

        var far = verdict.Targets[1];
        Assert.False(far.AtFloor); // 1.5x the floor: beyond 5% above it
        Assert.False(far.Met);
        Assert.Equal("NOT met", far.MetWord());

        Assert.True(verdict.Targets[2].Met); // a goal met is met, floor or not
        Assert.False(verdict.Targets[2].AtFloor);
    }

    [Fact]
    public void A_floor_takes_its_target_s_direction_and_refuses_a_tolerance_of_one_or_more()
    {
        Assert.Equal(0.95, Target.AtLeast(Metric.TimesBetter("x", "a", "b"), 1).AgainstFloor(Metric.TimesBetter("a vs floor", "a", "floor")).Floor!.Goal, precision: 12);
        var lower = Target.AtMost(Metric.TimesBetter("x", "a", "b"), 1).AgainstFloor(Metric.TimesBetter("a vs floor", "a", "floor"), tolerance: 0.1).Floor!;
        Assert.Equal(Comparator.AtMost, lower.Comparator);
        Assert.Equal(1.1, lower.Goal, precision: 12);
        Assert.Throws<ArgumentOutOfRangeException>(() => Target.AtLeast(Metric.TimesBetter("x", "a", "b"), 1).AgainstFloor(Metric.TimesBetter("a vs floor", "a", "floor"), tolerance: 1));
        Assert.Throws<ArgumentOutOfRangeException>(() => Target.AtMost(Metric.TimesBetter("x", "a", "b"), 1).AgainstFloor(Metric.TimesBetter("a vs floor", "a", "floor"), tolerance: -0.1));
    }

    [Fact]
    public void Every_registered_experiment_declares_a_claim_for_the_one_rule()
    {
        // Judge and Figure are not virtual: the claim and targets are the only way to a verdict.
        foreach (var e in ExperimentRegistry.All()) Assert.NotNull(e.Claim);
    }

    private static Measurement Ns(string variant, double median, double spread) => new()
    {
        Variant = variant,
        Unit = Unit.NsPerOp,
        Statistics = Statistics.From(Enumerable.Range(0, 12).Select(i => median * (1 + spread * ((i % 3) - 1))).ToArray()),
    };

    private static Measurement Spread(string variant, double median, double spread) => new()
    {
        Variant = variant,
        Unit = Unit.NsPerOp,
        Statistics = Statistics.From(Enumerable.Range(0, 12).Select(i => median * (1 + spread * (i / 11.0 - 0.5))).ToArray()),
    };
}
