using Manaloc.Lab.Experiments;
using Manaloc.Lab.Harness;
using Manaloc.Lab.Reporting;

namespace Manaloc.Lab.Tests.Reporting;

public sealed class RunBudgetTests
{
    private static readonly Dictionary<string, double> Declared = new() { ["a"] = 100, ["b"] = 60, ["c"] = 20 };

    private static ExperimentResult Result(string name, double seconds) => new()
    {
        Experiment = name, Article = "a", Description = "d", Baseline = "b", ElapsedSeconds = seconds,
        Verdict = new VerdictResult(Verdict.Holds, "t", 2, Unit.Ratio),
    };

    private static LabReport Report(RunMode mode, params ExperimentResult[] experiments)
        => new() { Mode = mode, Machine = MachineInfo.Current(), Experiments = experiments };

    [Fact]
    public void A_whole_quick_run_within_the_budget_says_how_much_is_left()
        => Assert.Equal("Time: the quick run's experiments took 4:15 in all, within its budget of 5:00 (0:45 to spare).",
            RunBudget.Describe(Report(RunMode.Quick, Result("a", 140), Result("b", 85), Result("c", 30)), Declared));

    [Fact]
    public void A_whole_quick_run_over_the_budget_says_by_how_much_and_names_what_took_far_longer_than_it_declares()
    {
        string text = RunBudget.Describe(Report(RunMode.Quick, Result("a", 175), Result("b", 100), Result("c", 30)), Declared)!;

        Assert.StartsWith("Time: the quick run's experiments took 5:05 in all, over its budget of 5:00 by 0:05.", text, StringComparison.Ordinal);
        // b took 100 s against 60 declared (more than 1.5 times); a took 175 against 100 (more too); c took 30 against 20 (exactly 1.5: not named).
        Assert.EndsWith("More than 1.5 times their declared cost: a 175 s (declares 100 s), b 100 s (declares 60 s).", text, StringComparison.Ordinal);
        Assert.DoesNotContain("c 30 s", text, StringComparison.Ordinal);
    }

    [Fact]
    public void A_quick_run_of_some_experiments_gives_their_time_and_says_the_budget_is_for_all()
    {
        Assert.Equal("Time: 2 experiments of the lab's 3 took 2:00 (the quick run's budget, 5:00, is for all of them).",
            RunBudget.Describe(Report(RunMode.Quick, Result("a", 100), Result("c", 20)), Declared));
        Assert.Equal("Time: 1 experiment of the lab's 3 took 0:20 (the quick run's budget, 5:00, is for all of them).",
            RunBudget.Describe(Report(RunMode.Quick, Result("c", 20)), Declared));
    }

    [Theory]
    [InlineData(RunMode.Full)]
    [InlineData(RunMode.Smoke)]
    public void Other_modes_have_no_budget_sentence(RunMode mode)
        => Assert.Null(RunBudget.Describe(Report(mode, Result("a", 900), Result("b", 900), Result("c", 900)), Declared));

    [Fact]
    public void The_report_states_the_time_against_the_budget()
    {
        var report = Report(RunMode.Quick, [.. ExperimentRegistry.All().Select(e => Result(e.Name, 1))]);

        string md = MarkdownReport.Render(report, new Dictionary<string, IReadOnlyList<RenderedChart>>());

        Assert.Contains($"Time: the quick run's experiments took 0:{ExperimentRegistry.All().Count:00} in all, within its budget of 5:00", md, StringComparison.Ordinal);
    }
}
