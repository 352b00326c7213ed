using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Manaloc.Memory;

public sealed unsafe partial class NativeSlabAllocator
{
    /// <summary>
    /// A thread's free blocks of one size class: an intrusive singly linked list (the link lives in the
    /// free block), with the class's allocation and free counts beside it so the hot path writes one line.
    /// </summary>
    internal struct Bin
    {
        public byte* Head;
        public int Count;
        /// <summary>Four batches of the class: a free that takes <see cref="Count"/> above it gives two batches back.</summary>
        public int Limit;
        public long Allocations;
        /// <summary>Blocks taken from the shared lists minus blocks given back (written on the slow paths only). Frees are
        /// derived from it (Count = Net - Allocations + Frees), so a push writes no counter.</summary>
        public long Net;

        /// <summary>Frees into this bin so far (racy read of three fields: statistics only; exact while the bin is still).</summary>
        public readonly long Frees => Count - Net + Allocations;
    }

    /// <summary>
    /// One thread's cache. Touched only by its thread, except that <see cref="Dispose"/> clears
    /// <see cref="Owner"/> and the finalizer runs after the thread is gone; the counters are read
    /// racily (64-bit reads are atomic on 64-bit platforms) for statistics only.
    /// </summary>
    /// <remarks>
    /// Everything the hot path writes lives in <see cref="_bins"/>, whose first and last
    /// <see cref="PadBins"/> entries are never used: two threads' caches are allocated next to each
    /// other on the managed heap, and without the padding their bins (and counters) shared cache lines,
    /// so two threads allocating at once would fight over those lines.
    /// </remarks>
    internal sealed class ThreadCache
    {
        /// <summary>Unused bins at each end of the array: at least 128 bytes, two cache lines (the adjacent-line prefetcher pairs them).</summary>
        private static readonly int PadBins = (128 + Unsafe.SizeOf<Bin>() - 1) / Unsafe.SizeOf<Bin>();

        private readonly Bin[] _bins;

        public ThreadCache(NativeSlabAllocator owner)
        {
            Owner = owner;
            // Pinned (the pinned object heap): a held thread heap keeps a pointer to the bins, one load fewer per call.
            _bins = GC.AllocateArray<Bin>(SizeClasses.Count + 2 * PadBins, pinned: true);
            for (int cls = 0; cls < ClassCount; cls++) BinOf(cls).Limit = 4 * SizeClasses.BatchSizes[cls];
        }

        /// <summary>The bin of class 0; the array is pinned, so the pointer stays valid while this cache is reachable.</summary>
        public Bin* Bins => (Bin*)Unsafe.AsPointer(ref BinOf(0));

        public NativeSlabAllocator? Owner;

        /// <summary>The <see cref="ThreadHeap"/> handed out for this cache (one per thread and allocator).</summary>
        public ThreadHeap? Heap;

        /// <summary>The <see cref="TypeAllocator.ThreadHeap"/> handed out for this cache, when the slab is a TypeAllocator's.</summary>
        public TypeAllocator.ThreadHeap? RecordHeap;

        /// <summary>A TypeAllocator's recycled handles, by record type index (<see cref="TypeAllocatorOptions.RecycleHandles"/>); null otherwise.</summary>
        public HandleStack?[]? Handles;

        public static int ClassCount => SizeClasses.Count;

        /// <summary>The bin of size class <paramref name="cls"/> (0 ≤ cls &lt; <see cref="ClassCount"/>, checked by the callers).</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public ref Bin BinOf(int cls) => ref Unsafe.Add(ref MemoryMarshal.GetArrayDataReference(_bins), cls + PadBins);

        /// <summary>Allocations from this cache, all classes (racy read: statistics only).</summary>
        public long Allocations
        {
            get
            {
                long sum = 0;
                for (int cls = 0; cls < ClassCount; cls++) sum += BinOf(cls).Allocations;
                return sum;
            }
        }

        /// <summary>Frees into this cache, all classes (racy read: statistics only).</summary>
        public long Frees
        {
            get
            {
                long sum = 0;
                for (int cls = 0; cls < ClassCount; cls++) sum += BinOf(cls).Frees;
                return sum;
            }
        }

        /// <summary>Allocations and frees, all classes, from one pass over the bins (racy read: statistics only).</summary>
        /// <remarks>Frees are derived from the allocation count read in the same pass (live blocks of a bin = Net − Count), so
        /// their difference, <see cref="SlabStatistics.LiveBlocks"/>, is off by at most what the owner does to one bin
        /// during the read (a refill or flush: a batch), not by everything it allocated while the reader went over the bins
        /// twice (which can be off by everything that thread did in the meantime).</remarks>
        public void ReadCounts(out long allocations, out long frees)
        {
            long sum = 0, live = 0;
            for (int cls = 0; cls < ClassCount; cls++)
            {
                ref Bin bin = ref BinOf(cls);
                live += bin.Net - bin.Count;
                sum += bin.Allocations;
            }
            allocations = sum;
            frees = sum - live;
        }

        /// <summary>Gives the blocks back once the cache's thread exited (no thread can reach it any more).</summary>
        /// <remarks>Only the thread's own slots (its thread-static and its <see cref="ThreadLocal{T}"/> value, which
        /// does not track values) reference a cache strongly; the owner lists it weakly. So when the thread exits,
        /// the cache becomes unreachable and this runs: the blocks go back to their chunks, and empty chunks are freed.</remarks>
        ~ThreadCache()
        {
            Owner?.RetireCache(this);
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private ThreadCache GetCache()
    {
        var cache = t_cache;
        if (cache is null || cache.Owner != this) cache = GetCacheSlow();
        return cache;
    }

    /// <summary>The calling thread's cache of this allocator (created on first use).</summary>
    internal ThreadCache CurrentCache
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => GetCache();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private ThreadCache GetCacheSlow()
    {
        if (_disposed) ThrowDisposed();
        var cache = _caches.Value;
        if (cache is null)
        {
            cache = new ThreadCache(this);
            _caches.Value = cache;
            lock (_cacheList)
            {
                // Pruned when it doubles: the list stays within twice the live caches.
                if (_cacheList.Count >= _cacheListPruneAt)
                {
                    _cacheList.RemoveAll(static w => !w.TryGetTarget(out _));
                    _cacheListPruneAt = Math.Max(16, 2 * _cacheList.Count);
                }
                _cacheList.Add(new WeakReference<ThreadCache>(cache));
            }
        }
        t_cache = cache;
        return cache;
    }

    // Every thread's cache, weakly, for statistics and Dispose: a strong list would keep an exited thread's cache (and its
    // blocks) until Dispose. Guarded by lock (_cacheList).
    private readonly List<WeakReference<ThreadCache>> _cacheList = [];
    private int _cacheListPruneAt = 16;

    /// <summary>The caches of threads that may still use them (a snapshot).</summary>
    private List<ThreadCache> LiveCaches()
    {
        var live = new List<ThreadCache>();
        lock (_cacheList)
        {
            foreach (var weak in _cacheList)
            {
                if (weak.TryGetTarget(out var cache)) live.Add(cache);
            }
        }
        return live;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal byte* AllocateFromClass(int cls) => AllocateFromClass(GetCache(), cls);

    /// <summary>Pops a block of class <paramref name="cls"/> from <paramref name="cache"/>, the calling thread's own.</summary>
    /// <remarks>Callers that do several things per operation fetch the cache once: a thread-static read costs
    /// a call into the runtime's TLS lookup on Linux, more than the pop itself.</remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal byte* AllocateFromClass(ThreadCache cache, int cls)
    {
        Debug.Assert(cache.Owner == this, "only the calling thread's own cache (a held thread heap's need not be t_cache)");
        ref Bin bin = ref cache.BinOf(cls);
        byte* p = bin.Head;
        if (p == null) return RefillAndAllocate(ref bin, cls);
        bin.Head = *(byte**)p;
        bin.Count--;
        bin.Allocations++;
        return p;
    }

    /// <summary>Pops a block of class <paramref name="cls"/> from <paramref name="bin"/>, a bin of the calling thread's own cache (a held heap's pointer into its pinned bins).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal byte* Pop(Bin* bin, int cls)
    {
        byte* p = bin->Head;
        if (p == null) return RefillAndAllocate(ref *bin, cls);
        bin->Head = *(byte**)p;
        bin->Count--;
        bin->Allocations++;
        return p;
    }

    /// <summary>Pushes a block of class <paramref name="cls"/> onto <paramref name="bin"/>, a bin of the calling thread's own cache.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void Push(Bin* bin, byte* p, int cls)
    {
        *(byte**)p = bin->Head;
        bin->Head = p;
        if (++bin->Count > bin->Limit) Flush(bin, cls);
    }

    /// <summary>Gives two batches of a full <paramref name="bin"/> (the calling thread's own) back to the shared lists: <see cref="Push"/>'s slow path, for callers that push inline.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal void Flush(Bin* bin, int cls) => ReturnToShared(cls, ref *bin, 2 * SizeClasses.BatchSizes[cls]);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void FreeToClass(byte* p, int cls) => FreeToClass(GetCache(), p, cls);

    /// <summary>Pushes a block of class <paramref name="cls"/> onto <paramref name="cache"/>, the calling thread's own.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void FreeToClass(ThreadCache cache, byte* p, int cls)
    {
        Debug.Assert(cache.Owner == this, "only the calling thread's own cache (a held thread heap's need not be t_cache)");
        ref Bin bin = ref cache.BinOf(cls);
        *(byte**)p = bin.Head;
        bin.Head = p;
        // Keep up to four batches and give two back: after a refill or a flush the bin sits two batches
        // from either edge, so a random alloc/free walk rarely reaches the shared lists (and their lock).
        if (++bin.Count > bin.Limit) ReturnToShared(cls, ref bin, 2 * SizeClasses.BatchSizes[cls]);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    internal byte* RefillAndAllocate(ref Bin bin, int cls)
    {
        byte* p = Refill(ref bin, cls);
        bin.Allocations++;
        return p;
    }

    /// <summary>Fills an empty bin from the shared lists and takes its first block, without counting the allocation (for callers that count it themselves).</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal byte* Refill(ref Bin bin, int cls)
    {
        Debug.Assert(bin.Head == null && bin.Count == 0, "refill only an empty bin");
        int taken = TakeFromShared(cls, 2 * SizeClasses.BatchSizes[cls], out byte* head);
        Debug.Assert(taken > 0 && head != null, "the shared list always yields at least one block");
        byte* p = head;
        bin.Head = *(byte**)p;
        bin.Count = taken - 1;
        bin.Net += taken;
        return p;
    }

    /// <summary>Moves the first <paramref name="count"/> blocks of <paramref name="bin"/> to the shared lists.</summary>
    internal void ReturnToShared(int cls, ref Bin bin, int count)
    {
        Debug.Assert(count > 0 && count <= bin.Count, "return what the bin holds");
        byte* head = bin.Head;
        byte* last = head;
        for (int i = 1; i < count; i++) last = *(byte**)last;
        bin.Head = *(byte**)last;
        bin.Count -= count;
        bin.Net -= count;
        *(byte**)last = null;
        GiveToShared(cls, head, count);
    }

    /// <summary>Called by a cache's finalizer after its thread exited.</summary>
    private void RetireCache(ThreadCache cache)
    {
        long allocations = cache.Allocations, frees = cache.Frees;
        for (int cls = 0; cls < ThreadCache.ClassCount; cls++)
        {
            ref Bin bin = ref cache.BinOf(cls);
            if (bin.Count == 0) continue;
            byte* head = bin.Head;
            int count = bin.Count;
            bin.Head = null;
            bin.Count = 0;
            bin.Net -= count;
            if (!GiveToShared(cls, head, count)) return; // disposed: the chunks are gone already
        }
        Interlocked.Add(ref _retiredAllocations, allocations); // statistics only
        Interlocked.Add(ref _retiredFrees, frees);
    }
}
