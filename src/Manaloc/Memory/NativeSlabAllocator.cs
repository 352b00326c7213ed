using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Manaloc.Memory;

/// <summary>
/// A native-memory allocator for raw blocks of any size: size classes carved from large aligned
/// chunks, a cache per thread that trades blocks with shared per-class lists in batches, frees from
/// any thread, empty chunks given back, and sizes above 8 KB passed to
/// <see cref="NativeMemory.AlignedAlloc(nuint, nuint)"/>. <see cref="TypeAllocator"/> stores its
/// records here.
/// </summary>
/// <remarks>
/// <para>Why: the system allocator takes a lock (or an atomic) per call and a P/Invoke per call from
/// .NET; here the common allocation and free touch only the calling thread's cache: a pointer pop or
/// push, no atomic, no lock. A lock of one size class is taken once per batch.</para>
/// <para>Two forms: <see cref="Allocate(nuint)"/> / <see cref="Free(void*)"/> hand out raw pointers
/// and check nothing (the fastest; a pointer not from this allocator is undefined behaviour), while
/// <see cref="AllocateBlock"/> / <see cref="Free(NativeBlock)"/> hand out a checked
/// <see cref="NativeBlock"/> whose every use is validated against a per-slot generation stamp. Free
/// a block the way it was allocated.</para>
/// <para>Thread safety: every member except <see cref="Dispose"/> may be called from any thread at
/// once; a block may be freed on another thread than the one that allocated it (it goes to the
/// freeing thread's cache). <see cref="Dispose"/> must not run concurrently with other calls (like
/// any Dispose); afterwards every call throws <see cref="ObjectDisposedException"/> and every
/// checked handle reports that it is no longer allocated. Blocks cached by a thread that exits go
/// back to the shared lists when the GC finds its cache unreachable (its finalizer gives them back,
/// and empty chunks are freed); <see cref="FlushThreadCache"/> before a thread ends does it at once.
/// <see cref="ThreadHeap"/> reaches the calling thread's cache with no thread-static lookup per call.</para>
/// <para>Memory-ordering argument: a block moves between threads only through (a) a class lock
/// (batch transfer), which orders the writes of the giving thread (free-list link, stamp) before the
/// reads of the taking thread, or (b) the user's own hand-off of the pointer, which must itself be a
/// synchronizing publication. The thread cache is touched only by its thread, and by its finalizer
/// once no thread can reach it (its thread exited). The chunk table is published with <see cref="Volatile.Write{T}(ref T, T)"/>
/// before any block of a new chunk leaves the class lock.</para>
/// <para>There is no finalizer: freeing native memory behind handles that may still be in use is the
/// crash this type exists to prevent. Dispose it (a forgotten allocator keeps its memory). Class
/// chunks freed while the allocator lives, and at Dispose, are given back to the system when the GC
/// collects their managed side, which every checked handle references: a stale handle always reads
/// mapped memory (see <see cref="SlabChunk"/>).</para>
/// </remarks>
public sealed unsafe partial class NativeSlabAllocator : IDisposable
{
    [ThreadStatic]
    private static ThreadCache? t_cache;

    private readonly ThreadLocal<ThreadCache> _caches;
    private readonly ClassState[] _classes;
    private volatile bool _disposed;
    // Set before the first stamped class block leaves AllocateStamped; read by ReleaseChunk under a class lock, which the
    // block's free passes through (batch return) before its chunk can be released, so the write is seen there.
    private bool _stampedEver;

    /// <summary>Creates an allocator that owns no memory until the first allocation.</summary>
    /// <param name="name">Name used in statistics, metrics tags and messages.</param>
    public NativeSlabAllocator(string? name = null)
    {
        Name = string.IsNullOrWhiteSpace(name) ? "slab" : name;
        _caches = new ThreadLocal<ThreadCache>(trackAllValues: false);
        _classes = new ClassState[SizeClasses.Count];
        for (int i = 0; i < _classes.Length; i++) _classes[i] = new ClassState(i);
        MemoryMetrics.Register(this);
    }

    /// <summary>The name given at construction.</summary>
    public string Name { get; }

    /// <summary>True once <see cref="Dispose"/> has run.</summary>
    public bool IsDisposed => _disposed;

    private uint _dedicatedGenerations = 1;

    /// <summary>The next odd generation for a dedicated block (wraps after 2^31 of them, skipping none: odd stays odd).</summary>
    private uint NextDedicatedGeneration() => Interlocked.Add(ref _dedicatedGenerations, 2); // atomicity only: orders nothing

    private static long s_lastToken;

    /// <summary>Unique in the process: a TypeAllocator's chunks carry it in their header, so Delete of a struct handle finds a foreign or stale one with one load.</summary>
    internal readonly long RecordToken = Interlocked.Increment(ref s_lastToken);

    /// <summary>What an <see cref="ObjectDisposedException"/> of this allocator names: <c>NativeSlabAllocator 'name'</c>, or the owning <see cref="TypeAllocator"/> for its slab.</summary>
    internal string DisposedObjectName { get => field ??= $"NativeSlabAllocator '{Name}'"; init; }

    /// <summary>Throws the <see cref="ObjectDisposedException"/> of this allocator, naming it.</summary>
    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal void ThrowDisposed() => ThrowHelper.ThrowDisposed(DisposedObjectName);

    /// <summary>The allocator's name and state: <c>NativeSlabAllocator 'buffers' (12 live blocks)</c>, or <c>(disposed)</c>.</summary>
    /// <remarks>Thread-safe and cheap: the counters the statistics keep, summed over the threads' caches; approximate while other threads allocate.</remarks>
    public override string ToString()
        => _disposed ? $"NativeSlabAllocator '{Name}' (disposed)" : $"NativeSlabAllocator '{Name}' ({LiveBlocksText(GetStatistics().LiveBlocks)})";

    /// <summary>"1 live block", "12 live blocks".</summary>
    internal static string LiveBlocksText(long count) => count == 1 ? "1 live block" : $"{count} live blocks";

    /// <summary>True for the slab a <see cref="TypeAllocator"/> creates for itself: its meters carry the TypeAllocator's name.</summary>
    internal bool OwnedByTypeAllocator { get; init; }

    /// <summary>Sizes up to this many bytes come from size classes; larger ones go to the system.</summary>
    public static int LargestClassSize => SizeClasses.MaxSize;

    /// <summary>Allocates <paramref name="size"/> bytes, 16-byte aligned, not zeroed. Unchecked: free with <see cref="Free(void*)"/>.</summary>
    /// <remarks>Thread-safe. Zero bytes allocate a 16-byte block.</remarks>
    /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
    /// <exception cref="OutOfMemoryException">The system refused a new chunk.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void* Allocate(nuint size)
    {
        // Small sizes (the common case) take their class from one inlined table load; ForSize is a call with a loop.
        if (size <= SizeClasses.SmallLimit) return AllocateFromClass(SizeClasses.ForSmall(size));
        int cls = SizeClasses.ForSize(size, 16);
        return cls >= 0 ? AllocateFromClass(cls) : AllocateLarge(size, 16, out _);
    }

    /// <summary>Allocates <paramref name="size"/> bytes aligned to <paramref name="alignment"/>, not zeroed. Unchecked: free with <see cref="Free(void*)"/>.</summary>
    /// <remarks>Thread-safe. Alignments up to 64 are served from size classes.</remarks>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="alignment"/> is not a power of two.</exception>
    /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
    public void* Allocate(nuint size, nuint alignment)
    {
        ValidateAlignment(alignment);
        int cls = SizeClasses.ForSize(size, alignment);
        return cls >= 0 ? AllocateFromClass(cls) : AllocateLarge(size, alignment, out _);
    }

    /// <summary>Frees a block from <see cref="Allocate(nuint)"/>. Unchecked: the pointer must come from this allocator and be freed once.</summary>
    /// <remarks>Thread-safe; any thread may free. A null pointer is ignored. Use <see cref="AllocateBlock"/> for checked frees.</remarks>
    /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Free(void* block)
    {
        if (block == null) return;
        // Before touching the chunk header: after Dispose the chunk is unmapped.
        if (_disposed) ThrowDisposed();
        nuint address = (nuint)block;
        if ((address & (SizeClasses.ChunkSize - 1)) == 0)
        {
            FreeLargeRaw((byte*)block);
            return;
        }
        int cls = ((int*)(address & ~(nuint)(SizeClasses.ChunkSize - 1)))[1];
        FreeToClass((byte*)block, cls);
    }

    /// <summary>Allocates a checked block of <paramref name="size"/> bytes aligned to <paramref name="alignment"/>.</summary>
    /// <param name="size">Bytes wanted.</param>
    /// <param name="alignment">A power of two.</param>
    /// <param name="zeroed">Clear the block (true by default).</param>
    /// <remarks>Thread-safe. Every use of the returned handle is checked against the block's generation, so a
    /// freed, double-freed or foreign block raises an exception instead of corrupting memory.</remarks>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="alignment"/> is not a power of two.</exception>
    /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
    public NativeBlock AllocateBlock(nuint size, nuint alignment = 16, bool zeroed = true)
    {
        ValidateAlignment(alignment);
        byte* p = AllocateStamped(StampedClass(size, alignment), size, alignment, out SlabChunk chunk, out uint generation);
        if (zeroed) NativeMemory.Clear(p, size);
        return new NativeBlock(p, size, chunk, generation);
    }

    /// <summary>Frees a block from <see cref="AllocateBlock"/>.</summary>
    /// <remarks>Thread-safe; exactly one of two racing frees of the same block succeeds.</remarks>
    /// <exception cref="ArgumentException">The block is default or belongs to another allocator.</exception>
    /// <exception cref="InvalidOperationException">The block was already freed.</exception>
    /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
    public void Free(NativeBlock block)
    {
        SlabChunk? chunk = block.Chunk;
        if (chunk is null) ThrowHelper.ThrowNotOurs(nameof(block), "The block is default: it was never allocated.");
        if (chunk.Owner != this) ThrowHelper.ThrowNotOurs(nameof(block), $"The block belongs to allocator '{chunk.Owner.Name}', not '{Name}'.");
        if (_disposed) ThrowDisposed();
        if (!TryReleaseStamp(ref chunk.StampOf(block.Pointer), block.Generation))
        {
            Diagnostics.ManalocEventSource.Log.DoubleFree("NativeBlock");
            ThrowHelper.ThrowInvalidOperation("The block was already freed.");
        }
        FreeStamped(block.Pointer, chunk);
    }

    /// <summary>Gives the calling thread's cached blocks back to the shared lists (e.g. before a thread goes idle).</summary>
    /// <remarks>Thread-safe; affects only the calling thread's cache.</remarks>
    public void FlushThreadCache()
    {
        if (_disposed) return;
        var cache = t_cache;
        if (cache is null || cache.Owner != this) cache = _caches.IsValueCreated ? _caches.Value : null;
        if (cache is null) return;
        cache.Handles = null; // a TypeAllocator's recycled handles: let the GC have them
        for (int cls = 0; cls < _classes.Length; cls++)
        {
            ref Bin bin = ref cache.BinOf(cls);
            if (bin.Count > 0) ReturnToShared(cls, ref bin, bin.Count);
        }
    }

    /// <summary>Frees every chunk and large block this allocator still holds. Handles made by it become invalid.</summary>
    /// <remarks>Not thread-safe with other calls on this allocator. Idempotent.</remarks>
    public void Dispose()
    {
        if (_disposed) return;
        _disposed = true;
        foreach (var cache in LiveCaches())
        {
            cache.Owner = null;
            cache.RecordHeap?.MarkDead();
            cache.Handles = null; // a thread's t_cache may outlive us: it must not keep handles (and through them us) alive
        }
        _caches.Dispose();
        foreach (var state in _classes)
        {
            lock (state)
            {
                state.Available = null;
                state.EmptyChunks = 0;
            }
        }
        ReleaseAllChunks();
        ReleaseAllLarge();
        MemoryMetrics.Unregister(this);
    }

    // ---- checked (stamped) path, used by NativeBlock, TypeAllocator and RecordArray ----

    /// <summary>The class for a stamped block of <paramref name="size"/> bytes (its trailer included), or -1 for a dedicated block.</summary>
    internal static int StampedClass(nuint size, nuint alignment)
        => size > (nuint)(SizeClasses.MaxSize - SlabChunk.Trailer) ? -1 : SizeClasses.ForSize(size + SlabChunk.Trailer, alignment);

    /// <summary>Allocates from class <paramref name="cls"/> (from <see cref="StampedClass"/>; -1: a dedicated block) and stamps the block as handed out.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal byte* AllocateStamped(int cls, nuint size, nuint alignment, out SlabChunk chunk, out uint generation)
        => AllocateStamped(GetCache(), cls, size, alignment, out chunk, out generation);

    /// <summary>As <see cref="AllocateStamped(int, nuint, nuint, out SlabChunk, out uint)"/> with the calling thread's cache already at hand.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal byte* AllocateStamped(ThreadCache cache, int cls, nuint size, nuint alignment, out SlabChunk chunk, out uint generation)
    {
        if (cls < 0)
        {
            byte* large = AllocateDedicated(size, alignment, out chunk);
            // A generation of its own per dedicated block (odd, from the allocator's counter), not always 1: the system
            // may hand the same address to the next large block, and a stale handle to the old one must not match it.
            generation = chunk.DedicatedStamp = NextDedicatedGeneration();
            return large;
        }
        if (!_stampedEver) _stampedEver = true; // read-mostly: written once, so threads do not trade the line
        byte* p = AllocateFromClass(cache, cls);
        chunk = ChunkOf(p);
        ref uint stamp = ref chunk.StampOf(p);
        // Plain write: this thread owns the free block exclusively; a stale handle's compare-exchange expects an older
        // odd value and fails against either the old even or the new odd value. "| 1": a block a raw Allocate used
        // has whatever its user left in the trailer; the stamp is made odd (live) whatever it was.
        generation = stamp = (stamp + 1) | 1;
        return p;
    }

    /// <summary>Moves a stamp from <paramref name="generation"/> to free; false when it was not live with that generation.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static bool TryReleaseStamp(ref uint stamp, uint generation)
        // Compare-exchange: of two racing frees of one handle only one moves the stamp, so a block
        // never enters a free list twice. An even generation (a deleted handle's) never matches a live stamp.
        => (generation & 1) != 0 && Interlocked.CompareExchange(ref stamp, generation + 1, generation) == generation;

    /// <summary>Returns a block whose stamp was already released.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void FreeStamped(byte* p, SlabChunk chunk)
    {
        if (chunk.ClassIndex >= 0) FreeToClass(p, chunk.ClassIndex);
        else FreeDedicated(chunk, deferred: false);
    }

    /// <summary>As <see cref="FreeStamped(byte*, SlabChunk)"/> with the calling thread's cache already at hand.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void FreeStamped(ThreadCache cache, byte* p, SlabChunk chunk)
    {
        if (chunk.ClassIndex >= 0) FreeToClass(cache, p, chunk.ClassIndex);
        else FreeDedicated(chunk, deferred: false);
    }

    /// <summary>The chunk a class block lives in.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal SlabChunk ChunkOf(byte* p)
    {
        int id = *(int*)SizeClasses.ChunkStart(p);
        return _chunkTable[id]!;
    }

    private static void ValidateAlignment(nuint alignment)
    {
        if (alignment == 0 || (alignment & (alignment - 1)) != 0)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(alignment), alignment, "The alignment must be a power of two.");
        }
    }

    // The counts of thread caches that were retired (their thread exited, or the allocator was disposed), added by the
    // retiring cache and read by GetStatistics: statistics only, Interlocked for atomic 64-bit adds, ordering nothing.
    private long _retiredAllocations;
    private long _retiredFrees;

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
        return new SlabStatistics { ReservedBytes = reserved, Chunks = chunks, LargeBlocks = large, Allocations = allocations, Frees = frees };
    }
}
