using Manaloc.Lab.Experiments;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Experiments;

/// <summary>
/// Every registered experiment runs end to end in smoke mode and produces a well-formed result, from a build of the lab
/// outside the repository (<see cref="OutOfTreeLab"/>): what an experiment starts (the HTTP service, the request server's
/// builds, the GC modes' children) comes from the lab's own build, whatever directory it is in.
/// </summary>
public sealed class EverySmokeTests(OutOfTreeLab lab) : IClassFixture<OutOfTreeLab>
{
    public static TheoryData<string> Names()
    {
        var data = new TheoryData<string>();
        foreach (var e in ExperimentRegistry.All()) data.Add(e.Name);
        return data;
    }

    [Theory]
    [MemberData(nameof(Names))]
    public void Runs_in_smoke_mode_from_a_build_outside_the_repository(string name)
    {
        var experiment = ExperimentRegistry.Find(name)!;
        var report = lab.RequireReport();
        Assert.Equal(RunMode.Smoke, report.Mode);
        var result = Assert.Single(report.Experiments, r => r.Experiment == name);

        Assert.Null(result.Error);
        Assert.NotEmpty(result.Measurements);
        Assert.Contains(experiment.Baseline, experiment.Variants);
        Assert.All(result.Measurements, m => Assert.True(m.Statistics.Count > 0 && double.IsFinite(m.Statistics.Median), $"{m.Variant}: bad statistics"));
        Assert.All(result.Measurements, m => Assert.Contains(m.Variant, experiment.Variants));
        Assert.False(string.IsNullOrWhiteSpace(result.Verdict.Text));
        Assert.NotNull(result.Headline);
        Assert.Equal(experiment.Headline!.Figure.Name, result.Headline.Figure.Name);
        Assert.Matches("^[a-z0-9]+(-[a-z0-9]+)*$", name);
    }

    [Fact]
    public void The_run_from_outside_the_repository_succeeds_and_reports_every_experiment()
    {
        var report = lab.RequireReport();
        Assert.True(lab.Lab.Code == 0, $"the out-of-tree smoke run exited {lab.Lab.Code}:\n{lab.Lab.Output}");
        Assert.Equal(ExperimentRegistry.All().Select(e => e.Name).Order(), report.Experiments.Select(r => r.Experiment).Order());
        // The build holds what the experiments start; nothing of the repository's samples is needed.
        Assert.True(File.Exists(Path.Combine(lab.BuildDirectory, "Manaloc.Lab.HttpApi.dll")), "the HttpApi service is not in the lab's build");
        Assert.False(File.Exists(Path.Combine(lab.BuildDirectory, "HttpApi.dll")), "samples/HttpApi was built into the lab's output");
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
