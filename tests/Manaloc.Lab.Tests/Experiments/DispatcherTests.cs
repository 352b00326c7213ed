using Manaloc.Lab.Experiments;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Experiments;

public sealed class DispatcherTests
{
    private static Measurement M(string variant, string unit, double[] samples, bool lowerIsBetter = true) => new()
    {
        Variant = variant,
        Unit = unit,
        LowerIsBetter = lowerIsBetter,
        Statistics = Statistics.From(samples),
    };

    [Fact]
    public void Smoke_run_records_throughput_and_heartbeats_for_every_variant()
    {
        var experiment = new Dispatcher();
        var result = ExperimentRunner.Run(experiment, RunSettings.Smoke());
        Assert.Null(result.Error);
        foreach (var variant in experiment.Variants)
        {
            Assert.Contains(result.Measurements, m => m.Variant == variant);
        }
        Assert.All(result.Measurements.Where(m => m.Unit == "ops/s"), m => Assert.True(m.Statistics.Median > 0));
        Assert.All(result.Measurements.Where(m => m.Variant.StartsWith("heartbeat", StringComparison.Ordinal)), m =>
        {
            Assert.Equal("ms", m.Unit);
            Assert.True(m.Statistics.Count >= 10, $"{m.Variant}: only {m.Statistics.Count} heartbeats");
        });
    }

    [Fact]
    public void Verdict_compares_the_median_heartbeats_and_the_targets_judge_the_p99()
    {
        var measurements = new[]
        {
            M("BlockingCollection workers", "ops/s", [1e6, 1e6, 1e6], lowerIsBetter: false),
            M("Channel workers", "ops/s", [2e6, 2e6, 2e6], lowerIsBetter: false),
            M("DedicatedThreadDispatcher", "ops/s", [3e6, 3e6, 3e6], lowerIsBetter: false),
            M("heartbeat, flood on ThreadPool", "ms", Enumerable.Repeat(20.0, 100).ToArray()),
            M("heartbeat, flood on dispatcher", "ms", Enumerable.Repeat(0.1, 100).ToArray()),
        };
        var verdict = new Dispatcher().Judge(measurements);
        Assert.Equal(Verdict.Holds, verdict.Verdict);
        Assert.Equal(200, verdict.TodayValue!.Value, 3);
        Assert.Equal(200, verdict.Targets[0].Today!.Value, 3); // p99 20 / 0.1
        Assert.True(verdict.Targets[0].Met);
        Assert.Equal(3, verdict.Targets[1].Today!.Value, 3);
        Assert.True(verdict.Targets[1].Met);
    }

    [Fact]
    public void No_p99_target_is_judged_from_fewer_than_a_hundred_heartbeats()
    {
        var measurements = new[]
        {
            M("BlockingCollection workers", "ops/s", [1e6, 1e6, 1e6], lowerIsBetter: false),
            M("DedicatedThreadDispatcher", "ops/s", [3e6, 3e6, 3e6], lowerIsBetter: false),
            M("heartbeat, flood on ThreadPool", "ms", [5, 20]),
            M("heartbeat, flood on dispatcher", "ms", [0.1, 4]),
        };
        var verdict = new Dispatcher().Judge(measurements);
        Assert.Null(verdict.Targets[0].Today);
        Assert.Equal("not measured", verdict.Targets[0].MetWord());
        Assert.NotNull(verdict.TodayValue); // the medians are still compared
    }

    [Fact]
    public void Verdict_is_reversed_when_the_dispatcher_flood_hurts_more()
    {
        var measurements = new[]
        {
            M("BlockingCollection workers", "ops/s", [2e6, 2e6, 2e6], lowerIsBetter: false),
            M("DedicatedThreadDispatcher", "ops/s", [1e6, 1e6, 1e6], lowerIsBetter: false),
            M("heartbeat, flood on ThreadPool", "ms", [1, 2]),
            M("heartbeat, flood on dispatcher", "ms", [5, 10]),
        };
        var verdict = new Dispatcher().Judge(measurements);
        Assert.Equal(Verdict.Reversed, verdict.Verdict);
        Assert.False(verdict.Targets[1].Met);
        Assert.False(verdict.Targets[2].Met == true);
    }
}
