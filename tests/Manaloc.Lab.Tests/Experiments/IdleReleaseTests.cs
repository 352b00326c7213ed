using Manaloc.Lab.Experiments;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Experiments;

/// <summary>idle-release records a retained-bytes curve per variant, and its target reads the two-period point against the peak.</summary>
public sealed class IdleReleaseTests
{
    private static Measurement Retained(string variant, double idle, double bytes) => new()
    {
        Variant = variant, Unit = Unit.Bytes, Parameters = Parameters.Of(("idle", idle)),
        Statistics = Statistics.From([bytes, bytes, bytes]), // more than one sample: a figure measured once is only reported, never judged
    };

    [Fact]
    public void The_target_is_the_share_of_the_peak_left_after_two_periods()
    {
        var verdict = new IdleRelease().Judge(
        [
            Retained("BufferManager", 0, 1000), Retained("BufferManager", 1, 1000), Retained("BufferManager", 2, 50),
            Retained("ArrayPool.Shared", 0, 1000), Retained("ArrayPool.Shared", 2, 1000),
        ]);
        var target = Assert.Single(verdict.Targets);
        Assert.Equal(5, target.Today!.Value, 6);
        Assert.True(target.Met == true);

        var missed = new IdleRelease().Judge([Retained("BufferManager", 0, 1000), Retained("BufferManager", 2, 200)]);
        Assert.True(Assert.Single(missed.Targets).Met == false);
    }

    [Fact]
    public void Runs_in_smoke_mode_with_a_curve_per_variant()
    {
        var experiment = new IdleRelease();
        var result = ExperimentRunner.Run(experiment, RunSettings.Smoke());
        Assert.Null(result.Error);
        foreach (string variant in experiment.Variants)
        {
            var curve = result.Measurements.Where(m => m.Variant == variant).ToArray();
            Assert.Equal(13, curve.Length); // every quarter period for three periods
            Assert.True(curve[0].Statistics.Median > 0, $"{variant}: nothing retained after the burst");
        }
        Assert.NotNull(Assert.Single(result.Verdict.Targets).Today);
    }
}
