using System.Collections.Concurrent;
using Manaloc.Memory;

namespace Manaloc.Lab.Soak;

internal sealed partial class SoakRun
{
    /// <summary>Where the sampler stops every soak thread (see <see cref="QuietPoint"/>).</summary>
    public QuietPoint Quiet { get; } = new();

    /// <summary>Heap bytes of one object of each kind the soak holds in flight, measured on this runtime.</summary>
    public ObjectSizes Sizes { get; } = ObjectSizes.Measure();

    /// <summary>
    /// At a quiet point (every thread that hands items over parked, so every figure is exact): the heap bytes the soak
    /// holds on purpose, which the memory series leaves out because they are load or bounded
    /// retention, not growth: records in the hand-off slots (their handles), pooled objects in the
    /// slots or idle in the pool, buffers in the slots (with their entries in the held set) or idle in
    /// the buffer manager. Adds a violation for every count that does not balance at that point.
    /// </summary>
    public long CountInFlightBytes()
    {
        int records = _records.Count(out _, static _ => 0);
        int pooled = _pooled.Count(out _, static _ => 0);
        int buffers = _rented.Count(out long bufferBytes, static b => b.Length);
        CheckQuietCounts(records, pooled, buffers);

        long pooledIdle = _pool.GetStatistics().Retained;
        long idleBufferBytes = 0;
        for (int shift = MinBufferShift; shift <= MaxBufferShift; shift++)
        {
            idleBufferBytes += _buffers.GetStatistics(1 << shift).Retained * ((1L << shift) + Sizes.ArrayOverhead);
        }
        return records * Sizes.RecordHandle
            + (pooled + pooledIdle) * Sizes.Pooled
            + bufferBytes + buffers * (Sizes.ArrayOverhead + Sizes.HeldSetEntry)
            + idleBufferBytes;
    }

    /// <summary>At a quiet point nobody holds anything in hand, so what was handed out and not yet given back is exactly what the slots hold.</summary>
    private void CheckQuietCounts(int records, int pooled, int buffers)
    {
        var c = Counters;
        long liveRecords = _allocator.CountLiveObjects();
        if (c.RecordsCreated - c.RecordsDeleted != records || liveRecords != records)
        {
            Violation($"quiet point: {records} records in the slots, but {c.RecordsCreated - c.RecordsDeleted} created and not deleted and {liveRecords} live in the allocator");
        }
        if (c.PoolRents - c.PoolReturns != pooled) Violation($"quiet point: {pooled} pooled objects in the slots, but {c.PoolRents - c.PoolReturns} rented and not returned");
        if (c.BufferRents - c.BufferReturns != buffers || _heldBuffers.Count != buffers)
        {
            Violation($"quiet point: {buffers} buffers in the slots, but {c.BufferRents - c.BufferReturns} rented and not returned and {_heldBuffers.Count} tracked as held");
        }
        if (_readers != 0 || _writers != 0) Violation("quiet point: someone is inside the lock while every thread is parked");
    }

    /// <summary>Set of held buffers sized so it never grows: its budget per lock (capacity / locks) exceeds every buffer that can be held at once.</summary>
    private static ConcurrentDictionary<byte[], byte> NewHeldSet()
        => new(HeldSetLocks, HeldSetLocks * 2 * MaxInFlight, ReferenceEqualityComparer.Instance);

    private static int HeldSetLocks => Environment.ProcessorCount;

    /// <summary>Heap bytes of one object of each kind the soak holds in flight.</summary>
    /// <remarks>Measured with the thread's allocation counter around one allocation (after a first call
    /// that pays for JIT and lazy set-up), not assumed from a layout, so they are this runtime's figures.</remarks>
    internal sealed record ObjectSizes(long ArrayOverhead, long RecordHandle, long Pooled, long HeldSetEntry)
    {
        private static object? s_sink; // keeps each measured allocation escaping (no stack allocation)

        public static ObjectSizes Measure()
        {
            long arrayOverhead = AllocatedBy(() => s_sink = new byte[16]) - 16;
            long pooled = AllocatedBy(() => s_sink = new SoakPooled());
            using var scratch = new TypeAllocator(new TypeAllocatorOptions { Name = "soak object sizes" });
            long record = AllocatedBy(() => scratch.Delete(scratch.New<ISoakRecord>()));
            var set = NewHeldSet();
            byte[] key = new byte[16];
            long entry = AllocatedBy(() =>
            {
                set.TryAdd(key, 1);
                set.TryRemove(key, out _);
            });
            s_sink = null;
            return new ObjectSizes(arrayOverhead, record, pooled, entry);
        }

        private static long AllocatedBy(Action action)
        {
            action();
            long before = GC.GetAllocatedBytesForCurrentThread();
            action();
            return GC.GetAllocatedBytesForCurrentThread() - before;
        }
    }
}
