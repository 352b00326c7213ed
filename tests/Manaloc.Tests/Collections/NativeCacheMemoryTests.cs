using System.Buffers;
using System.Diagnostics;
using Manaloc.Collections;
using Manaloc.Tests.Memory;
using Manaloc.Tests.Platform;

namespace Manaloc.Tests.Collections;

/// <summary>The cache's resident memory follows the entries it holds, not its budget. Runs alone: the resident figure is
/// the whole process's, which another test class allocating at the same time would inflate.</summary>
[Collection(nameof(ProcessMemoryCollection))]
public sealed class NativeCacheMemoryTests
{
    private static long ResidentBytes()
    {
        using var process = Process.GetCurrentProcess();
        return process.WorkingSet64; // VmRSS on Linux
    }

    [LinuxFact]
    public void A_large_budget_reserves_its_index_and_sketch_without_making_them_resident()
    {
        const long MaxBytes = 16L << 30;
        GC.Collect();
        long before = ResidentBytes();
        using var cache = new NativeCache(new NativeCacheOptions { MaxBytes = MaxBytes });
        long grown = ResidentBytes() - before;
        var statistics = cache.GetStatistics();
        // The budget counts the index and the sketch whole (about 4.7% of it), reserved at construction...
        Assert.True(statistics.Bytes >= MaxBytes / 25, $"Bytes {statistics.Bytes} should count the reserved index and sketch");
        Assert.True(statistics.Bytes <= MaxBytes);
        // ...but they are committed on first touch: construction makes next to none of them resident.
        Assert.True(grown < statistics.Bytes / 10, $"construction made {grown} bytes resident of the {statistics.Bytes} reserved");

        var value = new byte[300];
        for (int i = 0; i < 1000; i++)
        {
            value[0] = (byte)i;
            Assert.True(cache.Set(BitConverter.GetBytes(i), value));
        }
        for (int i = 0; i < 1000; i++)
        {
            var writer = new ArrayBufferWriter<byte>();
            Assert.True(cache.TryGet(BitConverter.GetBytes(i), writer));
            Assert.Equal(300, writer.WrittenCount);
            Assert.Equal((byte)i, writer.WrittenSpan[0]);
        }
        Assert.Equal(1000, cache.Count);
    }

    [Fact]
    public void A_small_budget_still_evicts_at_the_budget_and_keeps_its_figures_within_it()
    {
        const long MaxBytes = 1 << 20;
        using var cache = new NativeCache(new NativeCacheOptions { MaxBytes = MaxBytes });
        var value = new byte[500];
        for (int i = 0; i < 10_000; i++) Assert.True(cache.Set(BitConverter.GetBytes(i), value));
        var statistics = cache.GetStatistics();
        Assert.True(statistics.Evictions > 0, "5 MB of entries in a 1 MiB budget should evict");
        Assert.True(statistics.Bytes <= MaxBytes, $"Bytes {statistics.Bytes} passed the budget");
        Assert.True(statistics.EntryBytes <= NativeCache.SpaceForEntries(MaxBytes));
        var writer = new ArrayBufferWriter<byte>();
        Assert.True(cache.TryGet(BitConverter.GetBytes(9_999), writer), "the newest entry should be held");
        Assert.Equal(500, writer.WrittenCount);
    }
}
