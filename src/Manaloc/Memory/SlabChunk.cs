using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Manaloc.Memory;

/// <summary>
/// One chunk of a size class, or one dedicated block (a large record, a record array, a large raw or
/// checked block), of a <see cref="NativeSlabAllocator"/>: its native memory, where its blocks'
/// generation stamps are, and the chunk's part of the shared free list.
/// </summary>
/// <remarks>
/// <para>Stamps: even = free, odd = handed out. A stamped allocation makes the stamp odd and newer
/// (the new value is the handle's generation); a stamped free moves it on by one with a compare-exchange
/// against the handle's generation, so of two racing frees exactly one wins. A class block's stamp lives
/// in native memory, in the block's last 8 bytes (the <see cref="Trailer"/>: tag, then stamp), so a
/// checked accessor compares it at a constant offset from the address it loads anyway, on a line it
/// touches anyway. A dedicated block's stamp is a field of this object (<see cref="DedicatedStamp"/>),
/// so its native memory may go back to the system at once.</para>
/// <para>Lifetime: a handle keeps its chunk reachable, and a released class chunk's memory (all of whose
/// blocks are free, or whose allocator was disposed) is freed only when this object is collected
/// (<see cref="DeferRelease"/>): so a stale handle, even a copy made behind the allocator's back, can
/// always read its trailer and fail the compare instead of touching unmapped memory. A record array's
/// block is released the same way, which is why a reader racing its Dispose never reaches memory
/// handed to someone else.</para>
/// <para>The fields under "shared state" are guarded by the lock of the chunk's size class (dedicated
/// blocks: the large-block lock); the rest is immutable after construction.</para>
/// </remarks>
internal sealed unsafe class SlabChunk
{
    /// <summary>Bytes at the end of every class block reserved for its tag (2 bytes at −8) and stamp (4 bytes at −4).</summary>
    public const int Trailer = 8;

    public SlabChunk(NativeSlabAllocator owner, int id, byte* memory, int classIndex, nuint length)
    {
        Owner = owner;
        Id = id;
        Memory = memory;
        ClassIndex = classIndex;
        Length = length;
        if (classIndex >= 0)
        {
            BlockSize = SizeClasses.Sizes[classIndex];
            Blocks = memory + SizeClasses.ChunkHeader;
            Capacity = (SizeClasses.ChunkSize - SizeClasses.ChunkHeader) / BlockSize;
            Reciprocal = (uint)((1UL << 32) / (uint)BlockSize + 1);
            StampOffset = BlockSize - 4;
        }
        else
        {
            BlockSize = 0;
            Blocks = memory;
            Capacity = 1;
        }
    }

    public readonly NativeSlabAllocator Owner;
    /// <summary>Index in the owner's chunk table (class chunks) or -1 (dedicated blocks).</summary>
    public readonly int Id;
    public readonly byte* Memory;
    public readonly byte* Blocks;
    /// <summary>Size class, or -1 for a dedicated block.</summary>
    public readonly int ClassIndex;
    public readonly int BlockSize;
    public readonly int Capacity;
    /// <summary>ceil(2^32 / BlockSize): slot = offset * Reciprocal >> 32, exact for offsets below 2^17.</summary>
    public readonly uint Reciprocal;
    /// <summary>Bytes of native memory this chunk holds.</summary>
    public readonly nuint Length;
    /// <summary>Offset of a class block's stamp from the block's start (its last 4 bytes); 0 for a dedicated block.</summary>
    public readonly int StampOffset;

    /// <summary>The stamp of a dedicated block (a managed field: read without touching native memory).</summary>
    public uint DedicatedStamp;
    /// <summary>The tag of a dedicated block.</summary>
    public ushort DedicatedTag;
    /// <summary>A record array's block: released at its Dispose (or the allocator's) only when its views are gone. Set by its creator before the array is published.</summary>
    public bool IsRecordArray;

    /// <summary>A TypeAllocator's class chunk, or a struct handle's large record block (stamp and tag in its trailer): its
    /// process-wide home (the memory is never freed) and this owner's life in it; null otherwise.</summary>
    public RecordChunks.Home? Home;
    /// <summary>This owner's life in <see cref="Home"/>.</summary>
    public RecordChunks.Life? Life;
    /// <summary>Slots carved in earlier lives of a reused record chunk: their trailers hold the fresh floor stamp and must not be zeroed.</summary>
    public int CarvedBefore;

    /// <summary>Frees the native memory when this object is collected, once the chunk was released while handles may still read it.</summary>
    private DeferredRelease? _release;

    // ---- shared state, guarded by the class lock (dedicated blocks: by the large-block lock) ----
    public byte* FreeList;
    public int FreeCount;
    public int Carved;
    public int Outstanding;
    public bool InAvailableList;
    public bool Released;
    public SlabChunk? Prev;
    public SlabChunk? Next;

    /// <summary>The stamp of the block at <paramref name="block"/> (a block start of this chunk; any address for a dedicated one).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public ref uint StampOf(byte* block)
        => ref ClassIndex >= 0 ? ref *(uint*)(block + StampOffset) : ref Home is not null ? ref *(uint*)(Memory + Length - 4) : ref DedicatedStamp;

    /// <summary>The tag of the block at <paramref name="block"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public ref ushort TagOf(byte* block)
        => ref ClassIndex >= 0 ? ref *(ushort*)(block + BlockSize - Trailer) : ref Home is not null ? ref *(ushort*)(Memory + Length - 8) : ref DedicatedTag;

    /// <summary>The start of slot <paramref name="slot"/>.</summary>
    public byte* BlockAt(int slot) => Blocks + (nint)slot * BlockSize;

    /// <summary>The slot of block <paramref name="block"/> of this chunk.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public int SlotOf(byte* block)
    {
        if (ClassIndex < 0) return 0;
        ulong offset = (ulong)(block - Blocks);
        int slot = (int)((offset * Reciprocal) >> 32);
        Debug.Assert(slot >= 0 && slot < Capacity && Blocks + (nint)slot * BlockSize == block, "block is not a slot start");
        return slot;
    }

    /// <summary>A freshly carved class block: its trailer gets tag 0 and an even stamp (the chunk's memory is not zeroed): 0, or in
    /// a reused record chunk the life's floor, so every generation of this life is above the floor (what a stale handle's
    /// message is looked up by).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void InitTrailer(byte* block) => *(ulong*)(block + BlockSize - Trailer) = (ulong)(Life?.Floor ?? 0) << 32;

    /// <summary>True when the slot at <paramref name="block"/> is handed out by a stamped allocation (odd stamp).</summary>
    public bool IsLive(byte* block) => (Volatile.Read(ref StampOf(block)) & 1) != 0;

    /// <summary>
    /// Invalidates every block still handed out, at Dispose, before the memory goes: its stamp moves on
    /// (odd to even: accessors and <c>IsAllocated</c> fail, Delete is refused).
    /// </summary>
    public void InvalidateLiveStamps()
    {
        if (ClassIndex < 0)
        {
            ref uint stamp = ref StampOf(Memory);
            if ((stamp & 1) != 0) stamp++;
            return;
        }
        for (int slot = 0; slot < Carved; slot++)
        {
            ref uint stamp = ref StampOf(BlockAt(slot));
            if ((stamp & 1) != 0) stamp++;
        }
    }

    /// <summary>
    /// The native memory goes when this object is collected instead of now: handles (and views) that may
    /// still read it keep this object reachable. The GC is told about the bytes so it collects soon enough.
    /// </summary>
    public void DeferRelease(nuint bytes)
    {
        Debug.Assert(_release is null, "release once");
        _release = new DeferredRelease(Memory, bytes);
    }

    /// <summary>Frees a released chunk's memory in its finalizer, i.e. once no handle, view or chunk references it.</summary>
    /// <remarks>A critical finalizer: the runtime runs those after the ordinary finalizers of the same collection, so a
    /// user object's finalizer that still checks a handle into this chunk runs while the memory is there.</remarks>
    private sealed class DeferredRelease : System.Runtime.ConstrainedExecution.CriticalFinalizerObject
    {
        private readonly byte* _memory;
        private readonly long _bytes;

        public DeferredRelease(byte* memory, nuint bytes)
        {
            _memory = memory;
            _bytes = (long)bytes;
            GC.AddMemoryPressure(_bytes);
        }

        ~DeferredRelease()
        {
            NativeMemory.AlignedFree(_memory);
            GC.RemoveMemoryPressure(_bytes);
        }
    }
}
