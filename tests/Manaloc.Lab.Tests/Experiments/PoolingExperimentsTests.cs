using Manaloc.Lab.Experiments;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Experiments;

/// <summary>The verdicts of pool-scaling, buffers and gc-modes follow the measurements they are given, and the runs report the issue's targets.</summary>
public sealed class PoolingExperimentsTests
{
    private static Measurement Ops(string variant, int threads, double opsPerSecond)
    {
        return new Measurement
        {
            Variant = variant, Threads = threads, Unit = "ns/op", Parameters = Parameters.Of(("threads", threads)),
            Statistics = Statistics.From([1e9 / opsPerSecond, 1e9 / opsPerSecond, 1e9 / opsPerSecond]), OpsPerSecond = opsPerSecond, NsPerOp = 1e9 / opsPerSecond,
        };
    }

    [Fact]
    public void Pool_scaling_holds_when_the_semi_local_pool_scales_and_the_locked_one_does_not()
    {
        var verdict = new PoolScaling().Judge(
        [
            Ops("LockedPool", 1, 20e6), Ops("LockedPool", 2, 15e6),
            Ops("SemiLocalPool", 1, 60e6), Ops("SemiLocalPool", 2, 110e6),
        ]);
        Assert.Equal(Verdict.Holds, verdict.Verdict);
        Assert.Equal(110.0 / 15, verdict.TodayValue!.Value, 3);
    }

    [Fact]
    public void Pool_scaling_is_reversed_when_the_locked_pool_wins()
    {
        var verdict = new PoolScaling().Judge(
        [
            Ops("LockedPool", 1, 60e6), Ops("LockedPool", 2, 100e6),
            Ops("SemiLocalPool", 1, 20e6), Ops("SemiLocalPool", 2, 30e6),
        ]);
        Assert.Equal(Verdict.Reversed, verdict.Verdict);
    }

    [Fact]
    public void Pool_scaling_without_two_thread_counts_is_not_comparable()
        => Assert.Equal(Verdict.NotComparable, new PoolScaling().Judge([Ops("SemiLocalPool", 1, 1e6)]).Verdict);

    [Fact]
    public void Gc_modes_compares_the_workstation_class_and_struct_loops_with_the_article()
    {
        Measurement Ms(string variant, string gc, double ms) => new()
        {
            Variant = variant, Unit = "ms", Parameters = Parameters.Of(("gc", gc)),
            Statistics = Statistics.From([ms, ms, ms]),
        };
        var verdict = new GcModes().Judge([Ms("class temporaries", "workstation", 1100), Ms("struct locals", "workstation", 250), Ms("class temporaries", "server", 700)]);
        Assert.Equal(Verdict.Holds, verdict.Verdict);
        Assert.Equal(4.4, verdict.TodayValue!.Value, 3);
        Assert.Contains("workstation GC", verdict.Text, StringComparison.Ordinal);
    }

    [Fact]
    public void Gc_modes_children_sample_allocations_unless_told_not_to_and_refuse_other_arguments()
    {
        Assert.True(GcModes.Samples(["workstation"]));
        Assert.True(GcModes.Samples(["server", "sample"]));
        Assert.False(GcModes.Samples(["server", "no-sample"]));
        var error = Assert.Throws<ArgumentException>(() => GcModes.Samples(["server", "maybe"]));
        Assert.Contains("'sample' or 'no-sample'", error.Message, StringComparison.Ordinal);
        Assert.Throws<ArgumentException>(() => GcModes.Samples(["server", "sample", "extra"]));
    }

    [Fact]
    public void Pool_scaling_and_buffers_report_the_issue_targets_in_smoke_mode()
    {
        foreach (Experiment experiment in new Experiment[] { new PoolScaling(), new Manaloc.Lab.Experiments.Buffers() })
        {
            var result = ExperimentRunner.Run(experiment, RunSettings.Smoke());
            Assert.Null(result.Error);
            Assert.NotEmpty(result.Verdict.Targets);
            Assert.All(result.Verdict.Targets, t => Assert.NotNull(t.Today)); // every target measured, even in smoke mode
        }
    }
}
