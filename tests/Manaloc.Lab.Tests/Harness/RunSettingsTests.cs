using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Harness;

/// <summary>Which launch measures the figures no target reads, and whose notes and tables the report keeps.</summary>
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

    [Fact]
    public void Notes_and_tables_come_from_the_first_launch_in_every_mode()
    {
        foreach (var settings in new[] { RunSettings.Quick(), RunSettings.Full(), RunSettings.Quick() with { Launches = 2 } })
        {
            Assert.Equal([true, .. Enumerable.Repeat(false, settings.Launches - 1)],
                Enumerable.Range(0, settings.Launches).Select(l => (settings with { Launch = l }).ReportsNotesAndTables));
        }
        Assert.True(RunSettings.Smoke().ReportsNotesAndTables);
        // What the property stands for: the merge keeps the first launch's notes and tables and drops the others'.
        var first = new LaunchRun([], ["first"], [new ResultTable("first", ["a"], [])]);
        var second = new LaunchRun([], ["second"], [new ResultTable("second", ["a"], [])]);
        var merged = Launches.Merge([first, second]);
        Assert.Equal(["first"], merged.Notes);
        Assert.Equal("first", Assert.Single(merged.Tables).Title);
    }
}
