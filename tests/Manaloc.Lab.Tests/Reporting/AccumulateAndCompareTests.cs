using Manaloc.Lab.Harness;
using Manaloc.Lab.Reporting;

namespace Manaloc.Lab.Tests.Reporting;

public sealed class AccumulateAndCompareTests
{
    private static ExperimentResult Result(string name, double today, double low, double high, DateTimeOffset at) => new()
    {
        Experiment = name, Article = "a", Description = "d", Baseline = "b", RunAt = at,
        Verdict = new VerdictResult(Verdict.Holds, "t", today, Unit.Ratio) { Metric = "new vs old", Low = low, High = high },
    };

    private static LabReport Report(DateTimeOffset at, params ExperimentResult[] experiments)
        => new() { StartedAt = at, Mode = RunMode.Quick, Machine = MachineInfo.Current(), Experiments = experiments };

    [Fact]
    public void A_named_run_replaces_its_experiment_and_keeps_the_others_with_their_times()
    {
        var monday = new DateTimeOffset(2026, 11, 23, 0, 0, 0, TimeSpan.Zero);
        var tuesday = monday.AddDays(1);
        var existing = Report(monday, Result("a", 2, 1.9, 2.1, monday), Result("b", 3, 2.9, 3.1, monday), Result("gone", 1, 1, 1, monday));
        var fresh = Report(tuesday, Result("b", 5, 4.9, 5.1, tuesday));

        var merged = ReportWriter.Merge(existing, fresh, ["b", "a"]);

        Assert.Equal(["b", "a", "gone"], merged.Experiments.Select(e => e.Experiment));
        Assert.Equal(5, merged.Experiments[0].Verdict.TodayValue);
        Assert.Equal(tuesday, merged.Experiments[0].RunAt);
        Assert.Equal(monday, merged.Experiments[1].RunAt);
        Assert.Equal(tuesday, merged.StartedAt);
    }

    [Fact]
    public void Compare_flags_only_changes_whose_intervals_do_not_overlap()
    {
        var at = DateTimeOffset.UnixEpoch;
        var before = Report(at, Result("same", 2, 1.8, 2.2, at), Result("faster", 2, 1.9, 2.1, at), Result("count", 4, 4, 4, at), Result("only-before", 1, 1, 1, at));
        var after = Report(at, Result("same", 2.1, 1.9, 2.3, at), Result("faster", 4, 3.8, 4.2, at), Result("count", 8, 8, 8, at));

        var changes = ReportComparison.Compare(before, after);

        Assert.Equal(["same", "faster", "count"], changes.Select(c => c.Experiment));
        Assert.False(changes[0].OutsideNoise);
        Assert.True(changes[1].OutsideNoise);
        Assert.Equal(2, changes[1].Ratio, 6);
        Assert.Null(changes[2].OutsideNoise); // no interval: not called either way
        Assert.Equal("claim: new vs old", changes[0].Figure);
    }
}
