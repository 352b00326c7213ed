using System.Text.Json;
using Manaloc.Lab.Harness;
using Manaloc.Lab.Reporting;

namespace Manaloc.Lab.Tests.Harness;

/// <summary>
/// The bootstrap draws the rounds of measurements sampled in the same interleaved rounds once for all of them, so a
/// drift the rounds share cancels in their ratio; measurements not sampled in rounds are drawn sample by sample as before.
/// </summary>
public sealed class FiguresTests
{
    private const int RoundCount = 40;

    [Fact]
    public void Cells_sampled_in_the_same_rounds_are_drawn_by_round_so_a_common_drift_leaves_their_ratio_s_interval()
    {
        var (baseline, candidate) = Drifting(trueRatio: 1.1, noise: 0.02);
        var paired = Ratio([Marked(baseline, group: 1), Marked(candidate, group: 1)]);
        var apart = Ratio([baseline, candidate]);

        Assert.Equal(apart.Point, paired.Point); // the point estimate does not depend on the marker
        Assert.InRange(paired.Point!.Value, 1.05, 1.15);
        Assert.True(paired.Low > 1, $"paired interval {paired.Low}-{paired.High} should exclude 1");
        Assert.InRange(1.1, paired.Low, paired.High);
        Assert.True(apart.Low < 1, $"unpaired interval {apart.Low}-{apart.High} should take in the drift (and 1)");
        Assert.True(apart.High - apart.Low > 3 * (paired.High - paired.Low), $"unpaired {apart.Low}-{apart.High}, paired {paired.Low}-{paired.High}");
    }

    [Fact]
    public void A_ratio_that_is_exact_in_every_round_has_a_point_interval_when_paired()
    {
        var (baseline, candidate) = Drifting(trueRatio: 1.25, noise: 0);
        var paired = Ratio([Marked(baseline, group: 3), Marked(candidate, group: 3)]);
        Assert.Equal(1.25, paired.Low, 12);
        Assert.Equal(1.25, paired.High, 12);
    }

    [Fact]
    public void Measurements_of_different_round_groups_are_not_paired()
    {
        var (baseline, candidate) = Drifting(trueRatio: 1.25, noise: 0);
        var twoGroups = Ratio([Marked(baseline, group: 1), Marked(candidate, group: 2)]);
        Assert.True(twoGroups.High - twoGroups.Low > 0.1, $"{twoGroups.Low}-{twoGroups.High}");
    }

    [Fact]
    public void Pairing_holds_within_each_drawn_launch_of_merged_launches()
    {
        var runs = Enumerable.Range(0, 3).Select(launch =>
        {
            var (b, c) = Drifting(trueRatio: 1.25, noise: 0, seed: launch + 10);
            return new LaunchRun([Marked(b, group: 5), Marked(c, group: 5)], [], []);
        }).ToArray();
        var merged = Launches.Merge(runs).Measurements;
        var paired = Ratio(merged);
        Assert.Equal(1.25, paired.Low, 12);
        Assert.Equal(1.25, paired.High, 12);
        Assert.All(paired.Launches!, l => Assert.Equal(1.25, l.High, 12)); // each launch's own interval pairs too
    }

    [Fact]
    public void Unmarked_measurements_are_drawn_as_before_sample_by_sample_and_launches_first_beside_marked_ones()
    {
        var single = Sampled("single", [5, 1, 4, 2, 3, 9, 7]);
        var merged = Launches.Merge([new([Sampled("pooled", [10, 20, 30])], [], []), new([Sampled("pooled", [1, 2, 3, 4])], [], [])]).Measurements[0];
        var (baseline, candidate) = Drifting(trueRatio: 1.25, noise: 0.01, rounds: 10);
        var marked = new[] { Marked(baseline, group: 1), Marked(candidate, group: 1) };
        for (int seed = 0; seed < 20; seed++)
        {
            var figures = new Figures([.. marked, single, merged], new Random(seed), launch: null, rounds: new Random(seed + 1000));
            _ = figures.TimesBetter(marked[1], marked[0]); // the marked ones drawn first take nothing from the others' stream
            var expected = new Random(seed);

            // Whether the cells beside them are marked or not changes nothing of the others' draws.
            var unmarkedBeside = new Figures([baseline, candidate, single, merged], new Random(seed), launch: null, rounds: new Random(seed + 1000));
            _ = unmarkedBeside.TimesBetter(candidate, baseline);
            Assert.Equal(unmarkedBeside.Median(single), figures.Median(single));
            Assert.Equal(unmarkedBeside.Median(merged), figures.Median(merged));
            for (int i = 0; i < 2 * 10; i++) expected.Next(10); // the marked cells' draws are taken from the sample stream as if independent

            // One measurement: its samples drawn with replacement.
            var s = single.Statistics.Samples;
            double[] draw = [.. Enumerable.Range(0, s.Count).Select(_ => s[expected.Next(s.Count)])];
            Assert.Equal(Median(draw), figures.Median(single));

            // Two launches: the launches drawn first, then each drawn launch's samples.
            int[] picks = [expected.Next(2), expected.Next(2)];
            var pooled = new List<double>();
            foreach (int pick in picks)
            {
                int offset = pick == 0 ? 0 : 3, count = pick == 0 ? 3 : 4;
                for (int i = 0; i < count; i++) pooled.Add(merged.Statistics.Samples[offset + expected.Next(count)]);
            }
            Assert.Equal(Median([.. pooled]), figures.Median(merged));
        }
    }

    [Fact]
    public void A_draw_is_the_samples_drawn_with_replacement_in_sorted_order_at_every_rank_in_the_whole_run_and_in_one_launch()
    {
        var values = new Random(7);
        // Many ties (whole numbers 0..20), so the counts, not only the order, must come out right.
        double[] Launch() => [.. Enumerable.Range(0, 120).Select(_ => Math.Round(values.NextDouble() * 20))];
        var merged = Launches.Merge([new([Sampled("many", Launch())], [], []), new([Sampled("many", Launch())], [], [])]).Measurements[0];
        var samples = merged.Statistics.Samples;
        double[] fractions = [0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99];
        for (int seed = 0; seed < 10; seed++)
        {
            // The whole run: the launches drawn first, then each drawn launch's samples, sorted.
            var expected = new Random(seed);
            int[] picks = [expected.Next(2), expected.Next(2)];
            var pooled = new List<double>();
            foreach (int pick in picks)
            {
                for (int i = 0; i < 120; i++) pooled.Add(samples[pick * 120 + expected.Next(120)]);
            }
            double[] draw = [.. pooled.Order()];
            var figures = new Figures([merged], new Random(seed));
            Assert.All(fractions, f => Assert.Equal(Statistics.Percentile(draw, f), figures.Percentile(merged, f)));

            // The second launch alone: its samples drawn, sorted.
            var alone = new Random(seed);
            double[] second = [.. Enumerable.Range(0, 120).Select(_ => samples[120 + alone.Next(120)]).Order()];
            var launchView = new Figures([merged], new Random(seed), launch: 1);
            Assert.All(fractions, f => Assert.Equal(Statistics.Percentile(second, f), launchView.Percentile(merged, f)));
        }
        // As measured: every sample once, sorted.
        double[] sorted = [.. samples.Order()];
        var measured = new Figures([merged], random: null);
        Assert.All(fractions, f => Assert.Equal(Statistics.Percentile(sorted, f), measured.Percentile(merged, f)));
    }

    [Theory]
    [InlineData(new[] { 0, 1, 2, 3, 5, 6, 7, 8, 9 })] // a round skipped
    [InlineData(new[] { 0, 1, 1, 3, 4, 5, 6, 7, 8, 9 })] // a round twice, another missing
    [InlineData(new[] { 0, 1, 2, 3, 4, 5, 6, 7, 8, 99 })] // a round beyond the samples
    [InlineData(new[] { 0, 1, 2 })] // fewer rounds than samples
    public void A_cell_whose_rounds_do_not_match_its_samples_falls_back_to_drawing_its_samples_apart(int[] rounds)
    {
        var (baseline, candidate) = Drifting(trueRatio: 1.25, noise: 0, rounds: 10);
        var odd = Statistics.From([.. candidate.Statistics.Samples.Take(rounds.Length == 3 ? 10 : rounds.Length)]);
        var measurements = new[] { Marked(baseline, group: 1), candidate with { Statistics = odd, RoundGroup = 1, SampleRounds = rounds } };

        var estimate = Ratio(measurements);

        Assert.NotNull(estimate.Point);
        Assert.True(double.IsFinite(estimate.Low) && double.IsFinite(estimate.High));
        Assert.True(estimate.High - estimate.Low > 0.01, $"{estimate.Low}-{estimate.High}: the odd cell was drawn apart, so the drift shows");
        Assert.InRange(estimate.Point!.Value, estimate.Low, estimate.High);
    }

    [Fact]
    public void Several_samples_per_round_are_drawn_together_with_their_round()
    {
        // Two samples per round, the rounds listed out of order: a round drawn brings both, so the exact ratio stays exact.
        var (baseline, candidate) = Drifting(trueRatio: 1.25, noise: 0, rounds: 20);
        int[] rounds = [.. Enumerable.Range(0, 20).Select(i => (i % 10 * 7 + 3) % 10)];
        var b = baseline with { RoundGroup = 4, SampleRounds = rounds };
        var c = candidate with { RoundGroup = 4, SampleRounds = rounds };
        var paired = Ratio([b, c]);
        Assert.Equal(1.25, paired.Low, 12);
        Assert.Equal(1.25, paired.High, 12);
    }

    [Fact]
    public void Interleave_marks_its_measurements_with_one_group_and_each_sample_s_round()
    {
        Measurement One(int v, int round) => Sampled($"v{v}", [v + round]);
        var first = Rounds.Interleave(3, 6, CancellationToken.None, One);
        var second = Rounds.Interleave(3, 6, CancellationToken.None, One);

        Assert.NotNull(first[0].RoundGroup);
        Assert.All(first, m => Assert.Equal(first[0].RoundGroup, m.RoundGroup));
        Assert.All(first, m => Assert.Equal([0, 1, 2, 3, 4, 5], m.SampleRounds));
        Assert.NotEqual(first[0].RoundGroup, second[0].RoundGroup);
        Assert.Equal([1.0, 2, 3, 4, 5, 6], first[1].Statistics.Samples); // samples in round order, as the rounds say
    }

    [Fact]
    public void The_marker_survives_the_child_result_line_the_launch_merge_and_results_json()
    {
        var launches = Enumerable.Range(0, 2).Select(launch =>
        {
            var (b, c) = Drifting(trueRatio: 1.25, noise: 0, rounds: 4, seed: launch);
            var line = ChildProcess.FormatResultLine(new ChildOutput { Measurements = [Marked(b, group: 2 + launch), Marked(c, group: 2 + launch), Sampled("apart", [1, 2])] });
            var back = JsonSerializer.Deserialize<ChildOutput>(line.AsSpan(ChildProcess.Marker.Length), LabJson.Options)!;
            return new LaunchRun(back.Measurements, [], []);
        }).ToArray();

        var merged = Launches.Merge(launches).Measurements;
        var roundTripped = JsonSerializer.Deserialize<Measurement[]>(JsonSerializer.Serialize(merged, LabJson.Options), LabJson.Options)!;

        foreach (var m in new[] { merged, roundTripped })
        {
            Assert.Equal([0, 1, 2, 3, 0, 1, 2, 3], m[0].SampleRounds);
            Assert.Equal([2L, 3L], m[0].Launches.Select(l => l.RoundGroup ?? -1)); // each launch keeps its own group
            Assert.Equal([2L, 3L], m[1].Launches.Select(l => l.RoundGroup ?? -1));
            Assert.Empty(m[2].SampleRounds);
            Assert.Null(m[2].RoundGroup);
            Assert.All(m[2].Launches, l => Assert.Null(l.RoundGroup));
            var view = Launches.View(m[0], 1);
            Assert.Equal(3L, view.RoundGroup);
            Assert.Equal([0, 1, 2, 3], view.SampleRounds);
        }
        var paired = Ratio(roundTripped);
        Assert.Equal(1.25, paired.Low, 12);
        Assert.Equal(1.25, paired.High, 12);
    }

    [Fact]
    public void A_launch_that_did_not_sample_in_rounds_drops_the_marker_from_the_merge()
    {
        var (b, _) = Drifting(trueRatio: 1.25, noise: 0, rounds: 4);
        var merged = Launches.Merge([new([Marked(b, group: 1)], [], []), new([b], [], [])]).Measurements[0];
        Assert.Empty(merged.SampleRounds);
        Assert.Null(merged.RoundGroup);
        Assert.All(merged.Launches, l => Assert.Null(l.RoundGroup));
    }

    /// <summary>
    /// A baseline and a candidate sampled in the same rounds: the machine's speed drifts by up to 2x from round to round,
    /// both alike; the candidate is <paramref name="trueRatio"/> times faster; each sample has its own noise on top.
    /// </summary>
    private static (Measurement Baseline, Measurement Candidate) Drifting(double trueRatio, double noise, int rounds = RoundCount, int seed = 1)
    {
        var random = new Random(seed);
        var b = new double[rounds];
        var c = new double[rounds];
        for (int r = 0; r < rounds; r++)
        {
            double speed = 0.7 + 1.3 * random.NextDouble();
            b[r] = 100 * speed * (1 + noise * (random.NextDouble() * 2 - 1));
            c[r] = 100 / trueRatio * speed * (1 + noise * (random.NextDouble() * 2 - 1));
        }
        return (Sampled("baseline", b), Sampled("candidate", c));
    }

    private static Measurement Marked(Measurement m, long group)
        => m with { RoundGroup = group, SampleRounds = [.. Enumerable.Range(0, m.Statistics.Count)] };

    private static Measurement Sampled(string variant, double[] samples) => new()
    {
        Variant = variant,
        Unit = Unit.NsPerOp,
        Statistics = Statistics.From(samples),
    };

    private static Judgement.Estimate Ratio(IReadOnlyList<Measurement> measurements)
        => Judgement.EstimateAll(measurements, [Metric.TimesBetter("candidate vs baseline", "candidate", "baseline")], seed: 7)[0];

    private static double Median(double[] values)
    {
        Array.Sort(values);
        return Statistics.MedianOfSorted(values);
    }
}
