using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Harness;

/// <summary>Which launch measures the figures no target reads.</summary>
public sealed class RunSettingsTests
{
    [Fact]
    public void A_quick_run_measures_unjudged_figures_in_its_last_launch_only()
    {
        var quick = RunSettings.Quick();
        Assert.Equal([false, false, true], Enumerable.Range(0, quick.Launches).Select(l => (quick with { Launch = l }).MeasuresUnjudged));
        // Two launches (an experiment's quickLaunches) or one (--launches 1): still the last.
        Assert.Equal([false, true], Enumerable.Range(0, 2).Select(l => (quick with { Launches = 2, Launch = l }).MeasuresUnjudged));
        Assert.True((quick with { Launches = 1, Launch = 0 }).MeasuresUnjudged);
    }

    [Fact]
    public void Full_and_smoke_runs_measure_everything_in_every_launch()
    {
        var full = RunSettings.Full() with { Launches = 5 };
        Assert.All(Enumerable.Range(0, 5), l => Assert.True((full with { Launch = l }).MeasuresUnjudged));
        Assert.True(RunSettings.Smoke().MeasuresUnjudged);
    }
}
