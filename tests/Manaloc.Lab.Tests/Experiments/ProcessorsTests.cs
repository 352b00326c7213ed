using Manaloc.Lab.Harness;
using LabProcessors = Manaloc.Lab.Experiments.Processors;
using PlatformProcessors = Manaloc.Platform.Processors;

namespace Manaloc.Lab.Tests.Experiments;

public sealed class ProcessorsTests
{
    [Fact]
    public void A_child_started_from_a_pinned_thread_starts_with_that_mask_and_the_parent_thread_is_restored()
    {
        if (!OperatingSystem.IsLinux()) return;
        var before = PlatformProcessors.Read();
        int cpu = before.AffinityProcessors![0];
        var context = new ExperimentContext("processors", RunSettings.Smoke());

        var child = LabProcessors.RunStartedRestricted(context, cpu);

        Assert.Equal(1, child.Values["affinityCount"]);
        Assert.Equal(1, child.Values["availableCount"]);
        // The runtime sized itself from the mask it started with.
        Assert.Equal(1, child.Values["environmentProcessorCount"]);
        Assert.Equal(1, child.Machine!.AffinityProcessors);
        Assert.All(child.Measurements, m => Assert.Equal(LabProcessors.StartedRestricted, m.Parameters["process"]));
        Assert.Equal(before.AffinityProcessors, PlatformProcessors.Read().AffinityProcessors);
    }

    [Fact]
    public void A_child_restricted_after_start_keeps_its_start_up_processor_count()
    {
        if (!OperatingSystem.IsLinux()) return;
        int cpu = PlatformProcessors.Read().AffinityProcessors![0];
        var context = new ExperimentContext("processors", RunSettings.Smoke());

        var child = context.RunChild("measure", [LabProcessors.RestrictedAfterStart, cpu.ToString(System.Globalization.CultureInfo.InvariantCulture)]);

        Assert.Equal(1, child.Values["affinityCount"]);
        Assert.Equal(1, child.Values["availableCount"]);
        Assert.Equal(Environment.ProcessorCount, child.Values["environmentProcessorCount"]);
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
