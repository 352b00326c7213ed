using Manaloc.Lab.Experiments;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Experiments;

public sealed class ResetEventTests
{
    [Fact]
    public void Smoke_run_measures_every_variant_in_every_scenario()
    {
        var result = ExperimentRunner.Run(new ResetEvent(), RunSettings.Smoke());

        Assert.Null(result.Error);
        foreach (string scenario in new[] { "set-wait", "ping-pong", "producer-consumer" })
        {
            var variants = result.Measurements.Where(m => m.Parameters["scenario"] == scenario).Select(m => m.Variant).ToHashSet();
            Assert.Equal(new ResetEvent().Variants.ToHashSet(), variants);
        }
        Assert.Equal(3, result.Verdict.Targets.Count);
        Assert.All(result.Verdict.Targets, t => Assert.NotNull(t.Today)); // every target measured, even in smoke mode
    }

    [Fact]
    public void Judge_reports_the_ratio_and_each_target()
    {
        var m = new[]
        {
            Ns("AutoResetEvent", "set-wait", 500), Ns("ManualResetEventSlim", "set-wait", 9),
            Ns("SemaphoreSlim", "set-wait", 40), Ns("EconomicResetEvent", "set-wait", 5),
            Ns("AutoResetEvent", "ping-pong", 7000), Ns("ManualResetEventSlim", "ping-pong", 300),
            Ns("SemaphoreSlim", "ping-pong", 400), Ns("EconomicResetEvent", "ping-pong", 350),
        };

        var verdict = new ResetEvent().Judge(m);

        Assert.Equal(Verdict.Holds, verdict.Verdict);
        Assert.Equal(100, verdict.TodayValue!.Value, 3);
        Assert.Equal(3, verdict.Targets.Count);
        Assert.Equal(100, verdict.Targets[0].Today!.Value, 3);
        Assert.True(verdict.Targets[0].Met);
        Assert.Equal(8, verdict.Targets[1].Today!.Value, 3);
        Assert.True(verdict.Targets[1].Met);
        Assert.Equal(300.0 / 350, verdict.Targets[2].Today!.Value, 3); // the fastest other (ManualResetEventSlim) 300 vs 350 ns per hand-off
        Assert.False(verdict.Targets[2].Met);
    }

    internal static Measurement Ns(string variant, string scenario, double ns) => new()
    {
        Variant = variant,
        Parameters = Parameters.Of(("scenario", scenario)),
        Unit = "ns/op",
        Statistics = Statistics.From([ns, ns, ns]),
    };
}
