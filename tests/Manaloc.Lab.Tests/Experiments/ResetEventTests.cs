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
        Assert.Contains("Targets:", result.Verdict.Text, StringComparison.Ordinal);
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
        Assert.Contains("vs AutoResetEvent 100x (goal ≥ 20x: met)", verdict.Text, StringComparison.Ordinal);
        Assert.Contains("vs SemaphoreSlim 8x (goal ≥ 1.5x: met)", verdict.Text, StringComparison.Ordinal);
        Assert.Contains("(ManualResetEventSlim)", verdict.Text, StringComparison.Ordinal);
        Assert.Contains("not met", verdict.Text, StringComparison.Ordinal); // 300 vs 350 ns per hand-off
    }

    internal static Measurement Ns(string variant, string scenario, double ns) => new()
    {
        Variant = variant,
        Parameters = Parameters.Of(("scenario", scenario)),
        Unit = "ns/op",
        Statistics = Statistics.From([ns]),
    };
}
