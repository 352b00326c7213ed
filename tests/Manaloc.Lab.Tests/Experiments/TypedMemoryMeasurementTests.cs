using System.Reflection;
using System.Runtime;
using Manaloc.Lab.Experiments;
using Manaloc.Lab.Subjects;

namespace Manaloc.Lab.Tests.Experiments;

/// <summary>How typed-memory runs what it times: the same code shape for the pair whose ratio is the checks' cost, and a fill that leaves the GC as it found it.</summary>
public sealed class TypedMemoryMeasurementTests
{
    [Theory]
    [InlineData("StructPairs")]
    [InlineData("StructUncheckedPairs")]
    public void The_checked_and_unchecked_pair_loops_are_compiled_fully_optimised_from_their_first_call(string loop)
    {
        // Under tiering the two loops' code could differ from one launch to the next (on-stack replacement, a profile or
        // a synthesized one); both compiled the same way, a launch times the same code for both.
        var method = typeof(TypedMemory).GetMethod(loop, BindingFlags.NonPublic | BindingFlags.Static);
        Assert.NotNull(method);
        Assert.True(method.MethodImplementationFlags.HasFlag(MethodImplAttributes.AggressiveOptimization), $"{loop} is not AggressiveOptimization");
    }

    [Theory]
    [InlineData(7, 16, 21)]
    [InlineData(5, 8, 10)]
    [InlineData(5, 10, 10)]
    [InlineData(5, 2, 5)]
    [InlineData(2, 8, 8)]
    public void Rounds_are_the_fewest_whole_multiple_of_the_cells_that_give_each_its_samples(int cells, int samples, int rounds)
        => Assert.Equal(rounds, TypedMemory.RoundsFor(cells, samples));

    [Fact]
    public void The_class_fill_builds_every_record_in_order_and_ends_its_no_gc_region()
    {
        var items = TypedMemory.FillWithoutCollections(200_000);

        Assert.Equal(200_000, items.Length);
        for (int i = 0; i < items.Length; i++)
        {
            Assert.IsType<ManagedFoo>(items[i]);
            Assert.Equal(i, items[i].Bar);
        }
        Assert.NotEqual(GCLatencyMode.NoGCRegion, GCSettings.LatencyMode); // a region left open would hold the lab's later collections off
    }
}
