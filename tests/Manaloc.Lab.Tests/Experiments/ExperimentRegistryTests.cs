using Manaloc.Lab.Experiments;

namespace Manaloc.Lab.Tests.Experiments;

/// <summary>The registry's names build the experiments of those names, and finding one builds only it.</summary>
public sealed class ExperimentRegistryTests
{
    [Fact]
    public void Every_registered_name_builds_the_experiment_of_that_name()
    {
        Assert.Equal(ExperimentRegistry.Names.Count, ExperimentRegistry.Names.Distinct(StringComparer.OrdinalIgnoreCase).Count());
        Assert.Equal(ExperimentRegistry.Names, ExperimentRegistry.All().Select(e => e.Name)); // same experiments, same order
        foreach (string name in ExperimentRegistry.Names)
        {
            Assert.Equal(name, ExperimentRegistry.Find(name)!.Name);
            Assert.Equal(name, ExperimentRegistry.Find(name.ToUpperInvariant())!.Name); // case-insensitive
        }
    }

    [Fact]
    public void Find_builds_a_new_instance_each_call_and_nothing_for_an_unknown_name()
    {
        Assert.NotSame(ExperimentRegistry.Find("buffers"), ExperimentRegistry.Find("buffers"));
        Assert.Null(ExperimentRegistry.Find("no-such-experiment"));
        Assert.Null(ExperimentRegistry.Find(""));
    }
}
