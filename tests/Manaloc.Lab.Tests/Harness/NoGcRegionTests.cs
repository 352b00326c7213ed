using System.Runtime;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Harness;

/// <summary>A no-GC region is process-wide: these run alone, so no other test's collection ends one early.</summary>
[Collection(ProcessWideCollection.Name)]
public sealed class NoGcRegionTests
{
    [Fact]
    public void The_work_runs_once_in_a_region_its_result_is_handed_back_and_no_region_is_left_open()
    {
        int calls = 0;
        int collectionsBefore = GC.CollectionCount(0);
        GCLatencyMode during = GCLatencyMode.Batch;
        int collectionsDuring = -1;
        var kept = NoGcRegion.Run(64L << 20, () =>
        {
            calls++;
            during = GCSettings.LatencyMode;
            int at = GC.CollectionCount(0);
            var arrays = new byte[1000][];
            for (int i = 0; i < arrays.Length; i++) arrays[i] = new byte[1024];
            collectionsDuring = GC.CollectionCount(0) - at;
            return arrays;
        });
        Assert.Equal(1, calls);
        Assert.Equal(1000, kept.Length);
        Assert.Equal(GCLatencyMode.NoGCRegion, during);
        Assert.Equal(0, collectionsDuring);
        Assert.True(GC.CollectionCount(0) >= collectionsBefore);
        Assert.NotEqual(GCLatencyMode.NoGCRegion, GCSettings.LatencyMode);
    }

    [Fact]
    public void A_region_the_runtime_refuses_or_one_already_open_still_runs_the_work_and_a_throwing_work_ends_the_region()
    {
        // Larger than any runtime grants: the work runs with collections as usual.
        Assert.Equal(3, NoGcRegion.Run(long.MaxValue / 2, () => 3));
        // Nested: the inner call cannot open a second region, runs anyway, and leaves the outer one to its owner.
        Assert.Equal(5, NoGcRegion.Run(16L << 20, () => NoGcRegion.Run(16L << 20, () => 5)));
        Assert.NotEqual(GCLatencyMode.NoGCRegion, GCSettings.LatencyMode);
        Assert.Throws<InvalidOperationException>(() => NoGcRegion.Run<int>(16L << 20, () => throw new InvalidOperationException("work failed")));
        Assert.NotEqual(GCLatencyMode.NoGCRegion, GCSettings.LatencyMode);
    }

    [Fact]
    public void A_size_that_is_not_positive_or_no_work_is_refused()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => NoGcRegion.Run(0, () => 1));
        Assert.Throws<ArgumentNullException>(() => NoGcRegion.Run<int>(1 << 20, null!));
    }
}
