using Manaloc.Lab.Experiments;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Harness;

public sealed class ExperimentDeclarationTests
{
    [Fact]
    public void The_declaring_constructor_backs_every_declared_member()
    {
        var e = new Declared("demo", ["a", "b"], "b", sweep: "size");

        Assert.Equal("demo", e.Name);
        Assert.Equal("an article", e.Article);
        Assert.Equal("a description", e.Description);
        Assert.Equal(["a", "b"], e.Variants);
        Assert.Equal("b", e.Baseline);
        Assert.Equal(3, e.QuickSeconds);
        Assert.Equal("size", e.SweepParameter);
        Assert.True(e.DeclaresQuickSeconds);
    }

    [Fact]
    public void A_baseline_that_is_not_a_variant_is_refused_with_the_experiments_name()
    {
        var error = Assert.Throws<ArgumentException>(() => new Declared("demo", ["a", "b"], "c"));
        Assert.Contains("'demo'", error.Message, StringComparison.Ordinal);
        Assert.Contains("'c'", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Only_native_cache_declares_later_quick_launches_that_time_nothing()
    {
        // Its later quick launches measure NativeCache's memory growth alone; every other experiment times in every launch.
        Assert.Equal(["native-cache"], ExperimentRegistry.All().Where(e => e.LaterQuickLaunchesTimeNothing).Select(e => e.Name));
        Assert.False(new Declared("demo", ["a"], "a").LaterQuickLaunchesTimeNothing);
    }

    [Fact]
    public void Launches_run_side_by_side_come_back_in_launch_order()
    {
        var context = new ExperimentContext("clock-allocations", RunSettings.Smoke() with { Launches = 3 });
        var outputs = context.RunLaunchesTogether(1, 2, TimeSpan.FromMinutes(2));
        Assert.Equal(2, outputs.Count);
        Assert.All(outputs, o => Assert.NotEmpty(o.Measurements));
    }

    [Fact]
    public void No_variants_are_refused()
        => Assert.Throws<ArgumentException>(() => new Declared("demo", [], "a"));

    [Fact]
    public void An_experiment_that_neither_declares_nor_overrides_a_member_says_which()
    {
        var e = new Undeclared();
        var error = Assert.Throws<InvalidOperationException>(() => e.Variants);
        Assert.Contains(nameof(Undeclared), error.Message, StringComparison.Ordinal);
        Assert.Contains(nameof(Experiment.Variants), error.Message, StringComparison.Ordinal);
        Assert.False(e.DeclaresQuickSeconds);
    }

    [Fact]
    public void An_experiment_that_takes_fewer_quick_launches_runs_them_in_quick_mode_only()
    {
        var e = new Declared("demo", ["a", "b"], "b", quickLaunches: 2);

        Assert.Equal(2, e.QuickLaunches);
        Assert.Equal(2, e.SettingsFor(RunSettings.Quick()).Launches);
        Assert.Equal(RunSettings.Full().Launches, e.SettingsFor(RunSettings.Full()).Launches);
        Assert.Equal(1, e.SettingsFor(RunSettings.Smoke()).Launches);
    }

    [Fact]
    public void A_launch_count_from_the_command_line_overrides_an_experiments_quick_launches()
    {
        var e = new Declared("demo", ["a", "b"], "b", quickLaunches: 2);

        Assert.Equal(3, e.SettingsFor(RunSettings.Quick() with { LaunchesGiven = true }).Launches);
        Assert.Equal(1, e.SettingsFor(RunSettings.Quick() with { Launches = 1, LaunchesGiven = true }).Launches);
        // Fewer launches than the experiment's, however they were chosen, are never raised.
        Assert.Equal(1, e.SettingsFor(RunSettings.Quick() with { Launches = 1 }).Launches);
    }

    [Fact]
    public void An_experiment_that_declares_no_quick_launches_runs_quick_modes()
    {
        var e = new Declared("demo", ["a", "b"], "b");

        Assert.Null(e.QuickLaunches);
        Assert.Equal(RunSettings.Quick().Launches, e.SettingsFor(RunSettings.Quick()).Launches);
    }

    [Fact]
    public void Fewer_than_two_quick_launches_are_refused_because_one_cannot_show_launches_that_disagree()
    {
        var error = Assert.Throws<ArgumentOutOfRangeException>(() => new Declared("demo", ["a", "b"], "b", quickLaunches: 1));
        Assert.Equal("quickLaunches", error.ParamName);
    }

    [Fact]
    public void Every_registered_experiment_takes_two_quick_launches_or_quick_modes()
    {
        // Every registered experiment's quick launch count is 2 or quick mode's: never one, which could not judge launches.
        Assert.All(ExperimentRegistry.All(), e => Assert.True(e.QuickLaunches is null or >= 2, e.Name));
        Assert.Contains(ExperimentRegistry.All(), e => e.QuickLaunches == 2);
    }

    private sealed class Declared(string name, string[] variants, string baseline, string? sweep = null, int? quickLaunches = null)
        : Experiment(name, "an article", "a description", variants, baseline, quickSeconds: 3, sweepParameter: sweep, quickLaunches: quickLaunches)
    {
        public override void Run(ExperimentContext context)
        {
        }
    }

    private sealed class Undeclared : Experiment
    {
        public override string Name => "undeclared";

        public override void Run(ExperimentContext context)
        {
        }
    }
}
