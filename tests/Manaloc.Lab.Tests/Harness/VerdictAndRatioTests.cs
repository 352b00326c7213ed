using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Harness;

public sealed class VerdictAndRatioTests
{
    [Theory]
    [InlineData(100, 60, Verdict.Holds)]
    [InlineData(100, 50, Verdict.Holds)]
    [InlineData(100, 49, Verdict.Shrinks)]
    [InlineData(100, 1.0, Verdict.Shrinks)]
    [InlineData(100, 0.95, Verdict.Shrinks)]
    [InlineData(100, 0.5, Verdict.Reversed)]
    [InlineData(1.5, 1.2, Verdict.Holds)]
    [InlineData(1.5, 1.05, Verdict.Shrinks)]
    [InlineData(0, 3, Verdict.NotComparable)]
    [InlineData(2, double.NaN, Verdict.NotComparable)]
    public void Ratios_map_to_verdicts(double article, double today, Verdict expected)
        => Assert.Equal(expected, VerdictResult.FromRatios(article, today));

    [Fact]
    public void Ratios_pair_each_measurement_with_the_baseline_of_the_same_parameters_threads_and_unit()
    {
        var ms = new[]
        {
            M("base", 10, ("size", 1)), M("ours", 5, ("size", 1)),
            M("base", 40, ("size", 2)), M("ours", 10, ("size", 2)),
            M("ours", 7, ("size", 3)),
            M("ours", 9, ("size", 1)) with { Unit = "ms" },
        };
        var rated = ExperimentRunner.WithRatios(ms, "base");
        Assert.Equal(1.0, rated[0].RatioToBaseline);
        Assert.Equal(0.5, rated[1].RatioToBaseline);
        Assert.Equal(0.25, rated[3].RatioToBaseline);
        Assert.Null(rated[4].RatioToBaseline);
        Assert.Null(rated[5].RatioToBaseline);
    }

    [Fact]
    public void A_failing_experiment_is_recorded_not_thrown()
    {
        var result = ExperimentRunner.Run(new Failing(), RunSettings.Smoke());
        Assert.Equal("InvalidOperationException: broken on purpose", result.Error);
        Assert.Equal(Verdict.NotComparable, result.Verdict.Verdict);
        Assert.Single(result.Measurements); // what was recorded before the failure is kept
    }

    private static Measurement M(string variant, double median, params (string, ParameterValue)[] p) => new()
    {
        Variant = variant,
        Unit = "ns/op",
        Statistics = Statistics.From([median]),
        Parameters = Parameters.Of(p),
    };

    private sealed class Failing() : Experiment("failing", "none", "fails after one measurement", ["a"], "a", quickSeconds: 1)
    {
        public override void Run(ExperimentContext context)
        {
            context.RecordSamples("a", "ms", [1.0]);
            throw new InvalidOperationException("broken on purpose");
        }
    }
}
