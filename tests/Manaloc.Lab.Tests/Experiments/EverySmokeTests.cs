using Manaloc.Lab.Experiments;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Experiments;

/// <summary>Every registered experiment runs end to end in smoke mode and produces a well-formed result.</summary>
public sealed class EverySmokeTests
{
    public static TheoryData<string> Names()
    {
        var data = new TheoryData<string>();
        foreach (var e in ExperimentRegistry.All()) data.Add(e.Name);
        return data;
    }

    [Theory]
    [MemberData(nameof(Names))]
    public void Runs_in_smoke_mode(string name)
    {
        var experiment = ExperimentRegistry.Find(name)!;
        var result = ExperimentRunner.Run(experiment, RunSettings.Smoke());

        Assert.Null(result.Error);
        Assert.NotEmpty(result.Measurements);
        Assert.Equal(name, result.Experiment);
        Assert.Contains(experiment.Baseline, experiment.Variants);
        Assert.All(result.Measurements, m => Assert.True(m.Statistics.Count > 0 && double.IsFinite(m.Statistics.Median), $"{m.Variant}: bad statistics"));
        Assert.All(result.Measurements, m => Assert.Contains(m.Variant, experiment.Variants));
        Assert.False(string.IsNullOrWhiteSpace(result.Verdict.Text));
        Assert.NotNull(result.Headline);
        Assert.Equal(experiment.Headline!.Figure.Name, result.Headline.Figure.Name);
        Assert.Matches("^[a-z0-9]+(-[a-z0-9]+)*$", name);
    }

    [Fact]
    public void Names_are_unique_and_each_lives_in_its_own_file()
    {
        var all = ExperimentRegistry.All();
        Assert.Equal(all.Count, all.Select(e => e.Name).Distinct().Count());
        foreach (var e in all)
        {
            // File name = experiment name in PascalCase, e.g. clock-allocations → ClockAllocations.cs.
            string expected = string.Concat(e.Name.Split('-').Select(p => char.ToUpperInvariant(p[0]) + p[1..]));
            Assert.Equal(expected, e.GetType().Name);
        }
    }
}
