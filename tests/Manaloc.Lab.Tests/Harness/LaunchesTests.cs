using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Harness;

/// <summary>
/// The hierarchical bootstrap on synthetic launches with a known spread between them: each launch's samples
/// are drawn around its own level, as a process's placement or JIT sets it.
/// </summary>
public sealed class LaunchesTests
{
    private static readonly Claim Claim = new("old → new, no figure", null, Metric.TimesBetter("new vs old", "new", "old"));

    [Fact]
    public void Launches_that_land_in_two_modes_make_the_verdict_unstable_and_show_each_launch()
    {
        // false-sharing's case: one process sees 0.6x, the others 2.7x, each with a tight spread of its own.
        var ms = Merged(newLevels: [1 / 0.6, 1 / 2.7, 1 / 2.7], oldLevel: 1.0, jitter: 0.01);
        var verdict = Judgement.Judge(Claim, [Target.AtLeast(Claim.Today, 1.5)], ms, seed: 5);

        Assert.Equal(Verdict.Unstable, verdict.Verdict);
        Assert.Equal(3, verdict.Launches.Count);
        Assert.InRange(verdict.Launches[0].Point!.Value, 0.55, 0.65);
        Assert.InRange(verdict.Launches[1].Point!.Value, 2.6, 2.8);
        Assert.Contains("unstable", verdict.Text, StringComparison.Ordinal);
        Assert.Contains("launch 1 0.6", verdict.Text, StringComparison.Ordinal);
        // The hierarchical interval spans both modes, which the pooled samples' interval would not.
        Assert.True(verdict.Low < 0.7 && verdict.High > 2.5, $"[{verdict.Low}, {verdict.High}]");
        Assert.True(verdict.Targets[0].Unstable);
        Assert.Null(verdict.Targets[0].Met);
        Assert.Equal("unstable", verdict.Targets[0].MetWord());
    }

    [Fact]
    public void Two_launches_that_land_in_two_modes_still_make_the_verdict_unstable()
    {
        // An experiment that takes two launches in quick mode keeps the unstable answer: one launch at 0.6x, one at 2.7x.
        var ms = Merged(newLevels: [1 / 0.6, 1 / 2.7], oldLevel: 1.0, jitter: 0.01);
        var verdict = Judgement.Judge(Claim, [Target.AtLeast(Claim.Today, 1.5)], ms, seed: 5);

        Assert.Equal(Verdict.Unstable, verdict.Verdict);
        Assert.Equal(2, verdict.Launches.Count);
        Assert.True(verdict.Low < 0.7 && verdict.High > 2.5, $"[{verdict.Low}, {verdict.High}]");
        Assert.True(verdict.Targets[0].Unstable);
        Assert.Null(verdict.Targets[0].Met);
    }

    [Fact]
    public void Two_launches_apart_on_one_side_of_the_line_give_an_interval_that_spans_both()
    {
        // Launches at 1.6x and 2.5x, each tight: the interval spans both launches' figures, as three launches' does.
        var ms = Merged(newLevels: [1 / 1.6, 1 / 2.5], oldLevel: 1.0, jitter: 0.01);
        var verdict = Judgement.Judge(Claim, [], ms, seed: 9);

        Assert.Equal(Verdict.Holds, verdict.Verdict);
        Assert.True(verdict.Low < 1.65 && verdict.High > 2.45, $"[{verdict.Low}, {verdict.High}]");
    }

    [Fact]
    public void Launches_that_agree_give_a_tight_interval_and_a_verdict()
    {
        var ms = Merged(newLevels: [0.5, 0.5, 0.5], oldLevel: 1.0, jitter: 0.01);
        var verdict = Judgement.Judge(Claim, [Target.AtLeast(Claim.Today, 1.5)], ms, seed: 5);

        Assert.Equal(Verdict.Holds, verdict.Verdict);
        Assert.InRange(verdict.TodayValue!.Value, 1.95, 2.05);
        Assert.True(verdict.High - verdict.Low < 0.15, $"[{verdict.Low}, {verdict.High}]");
        Assert.True(verdict.Targets[0].Met);
        Assert.All(verdict.Launches, l => Assert.InRange(l.Point!.Value, 1.9, 2.1));
    }

    [Fact]
    public void A_difference_between_launches_widens_the_interval_beyond_the_pooled_samples()
    {
        // Launches at 1.6x, 2x and 2.5x: each tight, together spread. Same side of every line, so not unstable.
        var launched = Merged(newLevels: [1 / 1.6, 1 / 2.0, 1 / 2.5], oldLevel: 1.0, jitter: 0.01);
        var pooled = launched.Select(m => m with { Launches = [] }).ToArray();
        var metric = Claim.Today;

        var hierarchical = Judgement.EstimateAll(launched, [metric], seed: 9)[0];
        var flat = Judgement.EstimateAll(pooled, [metric], seed: 9)[0];

        Assert.True(hierarchical.High - hierarchical.Low > 2 * (flat.High - flat.Low),
            $"hierarchical [{hierarchical.Low}, {hierarchical.High}], pooled [{flat.Low}, {flat.High}]");
        Assert.Equal(Verdict.Holds, Judgement.Judge(Claim, [], launched, seed: 9).Verdict);
    }

    [Fact]
    public void A_figure_measured_once_is_reported_as_measured_and_never_met_or_missed()
    {
        var ms = new[] { One("old", 100), One("new", 10) };
        var verdict = Judgement.Judge(Claim, [Target.AtLeast(Claim.Today, 2)], ms, seed: 1);

        Assert.Equal(Verdict.Measured, verdict.Verdict);
        Assert.Contains("measured once", verdict.Text, StringComparison.Ordinal);
        Assert.Null(verdict.Targets[0].Met);
        Assert.Equal("measured", verdict.Targets[0].MetWord());

        // Three launches of one sample each are three observations: judged.
        var three = Launches.Merge([new([One("old", 100), One("new", 10)], [], []), new([One("old", 101), One("new", 10)], [], []), new([One("old", 99), One("new", 10)], [], [])]);
        var judged = Judgement.Judge(Claim, [Target.AtLeast(Claim.Today, 2)], three.Measurements, seed: 1);
        Assert.Equal(Verdict.Holds, judged.Verdict);
        Assert.True(judged.Targets[0].Met);
    }

    [Fact]
    public void Merging_keeps_each_launchs_samples_apart_in_launch_order_and_sums_the_counts()
    {
        var a = Samples("v", [1, 2, 3]) with { AllocatedBytes = 100, AllocatedBytesPerOp = 2, Gc = new GcCounts { Gen0 = 1 }, Metrics = new Dictionary<string, double> { ["x"] = 1 } };
        var b = Samples("v", [10, 20]) with { AllocatedBytes = 50, AllocatedBytesPerOp = 4, Gc = new GcCounts { Gen0 = 2 }, Metrics = new Dictionary<string, double> { ["x"] = 3 } };
        var other = Samples("w", [5]);

        var merged = Launches.Merge([new([a, other], ["first launch's note"], []), new([b], ["second"], [])]);

        Assert.Equal(["v", "w"], merged.Measurements.Select(m => m.Variant));
        var v = merged.Measurements[0];
        Assert.Equal([1, 2, 3, 10, 20], v.Statistics.Samples);
        Assert.Equal([(0, 3, 2.0), (1, 2, 15.0)], v.Launches.Select(l => (l.Launch, l.SampleCount, l.Median)));
        Assert.Equal(150, v.AllocatedBytes);
        Assert.Equal(3, v.AllocatedBytesPerOp);
        Assert.Equal(3, v.Gc.Gen0);
        Assert.Equal(2, v.Metrics["x"]);
        Assert.Equal(["first launch's note"], merged.Notes);
        Assert.Single(merged.Measurements[1].Launches);
    }

    [Fact]
    public void Estimates_side_by_side_repeat_exactly_and_leaving_out_the_launches_own_changes_no_interval()
    {
        var merged = Launches.Merge([
            new([Samples("old", [10, 11, 12, 10.5]), Samples("new", [5, 5.5, 6, 5.2])], [], []),
            new([Samples("old", [10.2, 10.8, 11.5, 12.1]), Samples("new", [5.1, 6.2, 5.7, 5.4])], [], []),
            new([Samples("old", [9.8, 10.1, 13, 11]), Samples("new", [4.9, 5.3, 6.1, 5.8])], [], [])]);
        Metric[] metrics = [Claim.Today, Metric.Median("old", "old", Unit.NsPerOp), Metric.Median("new", "new", Unit.NsPerOp)];
        var first = Judgement.EstimateAll(merged.Measurements, metrics, seed: 5);
        var again = Judgement.EstimateAll(merged.Measurements, metrics, seed: 5);
        var without = Judgement.EstimateAll(merged.Measurements, metrics, seed: 5, perLaunch: false);
        for (int i = 0; i < metrics.Length; i++)
        {
            Assert.Equal((first[i].Point, first[i].Low, first[i].High), (again[i].Point, again[i].Low, again[i].High));
            Assert.Equal(first[i].Launches!.Select(l => (l.Point, l.Low, l.High)), again[i].Launches!.Select(l => (l.Point, l.Low, l.High)));
            Assert.Equal(3, first[i].Launches!.Count);
            Assert.Equal((first[i].Point, first[i].Low, first[i].High), (without[i].Point, without[i].Low, without[i].High));
            Assert.Empty(without[i].Launches!);
        }
    }

    [Fact]
    public void One_launchs_view_reads_only_its_samples_and_a_missing_launch_is_not_measured()
    {
        var merged = Launches.Merge([new([Samples("old", [10, 10]), Samples("new", [5, 5])], [], []), new([Samples("old", [10, 10])], [], [])]);
        var estimate = Judgement.EstimateAll(merged.Measurements, [Claim.Today], seed: 2)[0];

        Assert.Equal(2, estimate.Launches!.Count);
        Assert.Equal(2, estimate.Launches[0].Point);
        Assert.Null(estimate.Launches[1].Point); // launch 2 measured no "new"
    }

    [Theory]
    [InlineData("0-1", new[] { 0, 1 })]
    [InlineData("0,4", new[] { 0, 4 })]
    [InlineData("2-3,8\n", new[] { 2, 3, 8 })]
    public void Cpu_lists_from_the_kernel_are_parsed(string text, int[] expected)
        => Assert.Equal(expected, CpuTopology.ParseCpuList(text));

    [Fact]
    public void A_malformed_cpu_list_is_an_error_that_quotes_it()
        => Assert.Contains("'0-x'", Assert.Throws<FormatException>(() => CpuTopology.ParseCpuList("0-x")).Message, StringComparison.Ordinal);

    [LinuxFact]
    public void The_placement_names_the_cpu_each_thread_ran_on()
    {
        var recorder = new PlacementRecorder(2);
        var threads = Enumerable.Range(0, 2).Select(i => new Thread(() => { for (int r = 0; r < 3; r++) recorder.Sample(i); })).ToArray();
        foreach (var t in threads) t.Start();
        foreach (var t in threads) t.Join(); // orders every Sample before Build

        var placement = recorder.Build();
        Assert.NotNull(placement);
        Assert.Equal(2, placement.ThreadCpus.Count);
        Assert.All(placement.ThreadCpus, cpus => Assert.All(cpus, c => Assert.InRange(c, 0, Environment.ProcessorCount * 4)));
        Assert.Equal(placement.ThreadCpus[0][0] == placement.ThreadCpus[1][0], placement.SharedCpu);
        Assert.StartsWith("CPUs ", placement.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public void A_thread_sweep_records_where_its_threads_ran_on_linux_only()
    {
        var m = ThreadSweep.Measure("v", 2, (_, n) => { for (long i = 0; i < n; i++) Thread.SpinWait(1); }, RunSettings.Smoke());
        if (OperatingSystem.IsLinux())
        {
            Assert.NotNull(m.Placement);
            Assert.Equal(2, m.Placement.ThreadCpus.Count);
        }
        else
        {
            Assert.Null(m.Placement);
        }
    }

    /// <summary>Launches (one per level) of "old" (level 1 ns) and "new" (the given level per launch), 12 samples each.</summary>
    private static IReadOnlyList<Measurement> Merged(double[] newLevels, double oldLevel, double jitter)
    {
        var runs = newLevels.Select((level, launch) => new LaunchRun(
            [Around("old", oldLevel, jitter, launch), Around("new", level, jitter, launch)], [], [])).ToArray();
        return Launches.Merge(runs).Measurements;
    }

    private static Measurement Around(string variant, double level, double jitter, int launch)
    {
        var random = new Random(launch * 7 + variant.Length);
        return Samples(variant, Enumerable.Range(0, 12).Select(_ => level * (1 + jitter * (random.NextDouble() * 2 - 1))).ToArray());
    }

    private static Measurement Samples(string variant, double[] samples) => new()
    {
        Variant = variant,
        Unit = Unit.NsPerOp,
        Statistics = Statistics.From(samples),
    };

    private static Measurement One(string variant, double value) => Samples(variant, [value]);
}
