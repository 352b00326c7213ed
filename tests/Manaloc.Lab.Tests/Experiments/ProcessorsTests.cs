using Manaloc.Lab.Harness;
using LabProcessors = Manaloc.Lab.Experiments.Processors;
using PlatformProcessors = Manaloc.Platform.Processors;

namespace Manaloc.Lab.Tests.Experiments;

public sealed class ProcessorsTests
{
    [LinuxFact]
    public void A_child_started_from_a_pinned_thread_starts_with_that_mask_and_the_parent_thread_is_restored()
    {
        var before = PlatformProcessors.Read();
        int cpu = before.AffinityProcessors![0];
        var context = new ExperimentContext("processors", RunSettings.Smoke());

        var child = LabProcessors.RunStartedRestricted(context, cpu);

        Assert.Equal(1, child.Values["affinityCount"]);
        Assert.Equal(1, child.Values["availableCount"]);
        // The runtime sized itself from the mask it started with.
        Assert.Equal(1, child.Values["environmentProcessorCount"]);
        Assert.Equal(1, child.Machine!.AffinityProcessors);
        Assert.All(child.Measurements, m => Assert.Equal(LabProcessors.StartedRestricted, m.Parameters.Text("process")));
        Assert.Equal(before.AffinityProcessors, PlatformProcessors.Read().AffinityProcessors);
    }

    [LinuxFact]
    public void A_child_restricted_after_start_keeps_its_start_up_processor_count()
    {
        int cpu = PlatformProcessors.Read().AffinityProcessors![0];
        var context = new ExperimentContext("processors", RunSettings.Smoke());

        var child = context.RunChild("measure", [LabProcessors.RestrictedAfterStart, cpu.ToString(System.Globalization.CultureInfo.InvariantCulture)]);

        Assert.Equal(1, child.Values["affinityCount"]);
        Assert.Equal(1, child.Values["availableCount"]);
        Assert.Equal(Environment.ProcessorCount, child.Values["environmentProcessorCount"]);
    }

    [LinuxFact]
    public void A_quota_child_runs_where_the_machine_allows_and_leaves_no_cgroup_behind()
    {
        string Cgroup() => File.ReadAllText("/proc/thread-self/cgroup");
        string before = Cgroup();
        var context = new ExperimentContext("processors", RunSettings.Smoke());

        // Without the opt-in nothing is created, and the reason names the variable.
        string? previous = Environment.GetEnvironmentVariable(LabProcessors.AllowCgroupVariable);
        Environment.SetEnvironmentVariable(LabProcessors.AllowCgroupVariable, null);
        Assert.Null(LabProcessors.RunUnderQuota(context, 1, out string? declined));
        Assert.Contains(LabProcessors.AllowCgroupVariable, declined);

        ChildOutput? child;
        string? skipped;
        Environment.SetEnvironmentVariable(LabProcessors.AllowCgroupVariable, "1");
        try
        {
            child = LabProcessors.RunUnderQuota(context, 1, out skipped);
        }
        finally
        {
            Environment.SetEnvironmentVariable(LabProcessors.AllowCgroupVariable, previous);
        }

        if (child is null)
        {
            Assert.False(string.IsNullOrWhiteSpace(skipped));
            return;
        }
        Assert.Null(skipped);
        Assert.Equal(1, Assert.Single(child.Measurements, m => m.Variant == "cgroup quota").Statistics.Median);
        Assert.Equal(1, child.Values["availableCount"]);
        Assert.Equal(1, child.Values["environmentProcessorCount"]);
        // This thread is back where it was, and the temporary cgroup is gone.
        Assert.Equal(before, Cgroup());
        string cpuPath = File.ReadAllLines("/proc/self/cgroup").Select(l => l.Split(':', 3)).First(f => f[1].Split(',').Contains("cpu"))[2];
        foreach (string mount in new[] { "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct" }.Where(Directory.Exists))
        {
            string dir = Path.Join(mount, cpuPath.TrimStart('/'));
            Assert.Empty(Directory.EnumerateDirectories(dir, $"manaloc-lab-{Environment.ProcessId}-*"));
        }
    }

    [Fact]
    public void The_smoke_run_reports_this_process_and_the_restricted_child_and_judges()
    {
        var experiment = new LabProcessors();
        var result = ExperimentRunner.Run(experiment, RunSettings.Smoke());

        Assert.Null(result.Error);
        Assert.Contains(result.Measurements, m => m.Parameters["process"] == LabProcessors.ThisProcess && m.Variant == "Environment.ProcessorCount" && m.Statistics.Median == Environment.ProcessorCount);
        if (OperatingSystem.IsLinux())
        {
            Assert.Contains(result.Measurements, m => m.Parameters["process"] == LabProcessors.StartedRestricted && m.Variant == "Processors.AvailableCount" && m.Statistics.Median == 1);
            Assert.NotEqual(Verdict.NotComparable, result.Verdict.Verdict);
        }
        Assert.NotEmpty(result.Tables);
    }
}
