using Manaloc.Lab.Experiments;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Experiments;

public sealed class BoundedQueueTests
{
    private static Measurement M(string variant, string unit, double value) => new()
    {
        Variant = variant,
        Unit = unit,
        LowerIsBetter = unit == "bytes",
        Statistics = Statistics.From([value, value, value]),
    };

    [Fact]
    public void Smoke_run_records_memory_and_throughput_per_variant()
    {
        var experiment = new BoundedQueue();
        var result = ExperimentRunner.Run(experiment, RunSettings.Smoke());
        Assert.Null(result.Error);
        foreach (var variant in experiment.Variants)
        {
            Assert.Contains(result.Measurements, m => m.Variant == variant && m.Unit == "bytes");
            Assert.Contains(result.Measurements, m => m.Variant == variant && m.Unit == "ops/s" && m.Statistics.Median > 0);
        }
    }

    [Fact]
    public void Target_is_met_at_low_memory_and_equal_throughput()
    {
        var verdict = new BoundedQueue().Judge(
        [
            M("unbounded BlockingCollection", "bytes", 100e6), M("unbounded BlockingCollection", "ops/s", 1e6),
            M("DedicatedThreadDispatcher capped", "bytes", 4e6), M("DedicatedThreadDispatcher capped", "ops/s", 0.95e6),
        ]);
        Assert.Equal(Verdict.Shrinks, verdict.Verdict); // 25x less memory: under half the article's 220x
        Assert.Equal(25, verdict.TodayValue!.Value, 6);
        Assert.All(verdict.Targets, t => Assert.True(t.Met, t.ToString()));
        Assert.Equal(4, verdict.Targets[0].Today!.Value, 6); // percent of unbounded
    }

    [Fact]
    public void Target_is_not_met_when_the_cap_costs_throughput()
    {
        var verdict = new BoundedQueue().Judge(
        [
            M("unbounded BlockingCollection", "bytes", 100e6), M("unbounded BlockingCollection", "ops/s", 1e6),
            M("DedicatedThreadDispatcher capped", "bytes", 4e6), M("DedicatedThreadDispatcher capped", "ops/s", 0.5e6),
        ]);
        Assert.True(verdict.Targets[0].Met); // memory is fine …
        Assert.False(verdict.Targets[1].Met); // … throughput is not
    }
}
