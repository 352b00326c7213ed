using System.Diagnostics;
using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

public interface ITenKilobytes
{
    HugeRun Run { get; set; }
    Point3 A { get; set; }
}

/// <summary>Runs alone: the resident-memory figure is the whole process's working set, which another test class allocating
/// at the same time would inflate.</summary>
[CollectionDefinition(nameof(ProcessMemoryCollection), DisableParallelization = true)]
public sealed class ProcessMemoryCollection;

[Collection(nameof(ProcessMemoryCollection))]
public sealed class LargeRecordTests
{
    [Fact]
    public void Records_larger_than_a_class_block_cost_about_their_size_in_resident_memory()
    {
        using var allocator = new TypeAllocator();
        int size = allocator.GetLayout(typeof(ITenKilobytes)).Size;
        Assert.True(size > NativeSlabAllocator.LargestClassSize, $"{size} B is a class size: the test needs a dedicated block");
        const int Count = 2000;
        var records = new ITenKilobytes[Count];
        GC.Collect();
        using var process = Process.GetCurrentProcess();
        process.Refresh();
        long before = process.WorkingSet64;
        for (int i = 0; i < Count; i++)
        {
            records[i] = allocator.New<ITenKilobytes>();
            records[i].A = new Point3 { X = i };
        }
        process.Refresh();
        double perRecord = (double)(process.WorkingSet64 - before) / Count;
        // The record is zeroed on New, so its pages are resident: about its size plus the system allocator's header.
        // Aligned to the 128 KB chunk size, each cost ~21.6 KiB (the alignment's wasted pages).
        Assert.True(perRecord < size * 1.5, $"{perRecord / 1024:F1} KiB resident per {size / 1024.0:F1} KiB record");
        for (int i = 0; i < Count; i++)
        {
            Assert.Equal(i, records[i].A.X);
            allocator.Delete(records[i]);
        }
        Assert.Equal(0, allocator.GetSlabStatistics().ReservedBytes);
    }

    [Fact]
    public void A_large_record_is_not_aligned_to_the_chunk_size_and_keeps_its_own_alignment()
    {
        using var allocator = new TypeAllocator();
        var records = Enumerable.Range(0, 16).Select(_ => allocator.New<ITenKilobytes>()).ToList();
        unsafe
        {
            // Sixteen in a row all on 128 KB boundaries would mean the chunk-size alignment is still asked for.
            Assert.Contains(records, r => ((nuint)((NativeRecord)(object)r).Address & (128 * 1024 - 1)) != 0);
            Assert.All(records, r => Assert.Equal(0u, (uint)((nuint)((NativeRecord)(object)r).Address % 16)));
        }
        foreach (var r in records) allocator.Delete(r);
    }
}
