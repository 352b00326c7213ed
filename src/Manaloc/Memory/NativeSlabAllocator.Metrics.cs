namespace Manaloc.Memory;

public sealed partial class NativeSlabAllocator
{
    /// <summary>Counters of this allocator as one snapshot (native bytes held, chunks, large blocks, allocations, frees):
    /// its one statistics shape.</summary>
    /// <remarks>Thread-safe. Sums per-thread counters read without synchronization, so the figures are approximate while other threads allocate.</remarks>
    public SlabStatistics GetStatistics()
    {
        long allocations, frees, chunks, reserved, large;
        lock (_chunkLock)
        {
            chunks = _chunkCount;
            reserved = _reservedBytes;
        }
        lock (_largeLock)
        {
            reserved += _largeBytes;
            large = _large.Count;
            allocations = _largeAllocations;
            frees = _largeFrees;
        }
        // Racy reads of other threads' single-writer counters: statistics only.
        allocations += Interlocked.Read(ref _retiredAllocations);
        frees += Interlocked.Read(ref _retiredFrees);
        if (!_disposed)
        {
            foreach (var cache in LiveCaches())
            {
                cache.ReadCounts(out long cacheAllocations, out long cacheFrees);
                allocations += cacheAllocations;
                frees += cacheFrees;
            }
        }
        return new SlabStatistics(reserved, chunks, large, allocations, frees);
    }
}
