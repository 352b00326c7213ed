using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Manaloc.Memory;

/// <summary>
/// One chunk of a size class (or one large block) of a <see cref="NativeSlabAllocator"/>: its native
/// memory, the per-slot generation stamps checked handles compare against, and the chunk's part of
/// the shared free list.
/// </summary>
/// <remarks>
/// The managed object outlives the native memory: handles keep it (and so the stamps) reachable
/// after their block, the chunk or the whole allocator is gone, which is what lets a stale handle
/// fail a compare instead of reading freed memory.
/// <para>Stamps: even = free, odd = handed out. A stamped allocation adds one (the new value is the
/// handle's generation), a stamped free moves it on by one with a compare-exchange against the
/// handle's generation, so of two racing frees exactly one wins. The fields under "shared state" are
/// guarded by the lock of the chunk's size class; the rest is immutable after construction.</para>
/// </remarks>
internal sealed unsafe class SlabChunk
{
    public SlabChunk(NativeSlabAllocator owner, int id, byte* memory, int classIndex, nuint length, bool tagged, bool trackHandles = false)
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
        }
        else
        {
            BlockSize = 0;
            Blocks = memory;
            Capacity = 1;
        }
        // Pinned, so a handle can keep a raw pointer to its stamp: one load, no bounds check.
        Stamps = GC.AllocateArray<uint>(Capacity, pinned: true);
        StampBase = (uint*)Unsafe.AsPointer(ref Stamps[0]);
        Tags = tagged ? new ushort[Capacity] : null;
        Handles = trackHandles ? new TrackedHandle[Capacity] : null;
    }

    public readonly NativeSlabAllocator Owner;
    /// <summary>Index in the owner's chunk table (small chunks) or -1 (large blocks).</summary>
    public readonly int Id;
    public readonly byte* Memory;
    public readonly byte* Blocks;
    /// <summary>Size class, or -1 for a large block.</summary>
    public readonly int ClassIndex;
    public readonly int BlockSize;
    public readonly int Capacity;
    /// <summary>ceil(2^32 / BlockSize): slot = offset * Reciprocal >> 32, exact for offsets below 2^17.</summary>
    public readonly uint Reciprocal;
    /// <summary>Bytes of native memory this chunk holds.</summary>
    public readonly nuint Length;
    public readonly uint[] Stamps;
    public readonly uint* StampBase;
    /// <summary>What each slot holds (a TypeAllocator type tag), when the owner tags.</summary>
    public readonly ushort[]? Tags;
    /// <summary>
    /// A checked TypeAllocator's live handle per slot (set by New, cleared by Delete; both by the thread that owns the
    /// block at that moment), so Dispose can null every live handle's address: a checked accessor tests only that.
    /// </summary>
    public readonly TrackedHandle[]? Handles;

    /// <summary>One slot of <see cref="Handles"/>: a struct, so a store skips the covariance check a NativeRecord[] store pays.</summary>
    public struct TrackedHandle
    {
        public NativeRecord? Handle;
    }

    // ---- shared state, guarded by the class lock (large blocks: by the large-block lock) ----
    public byte* FreeList;
    public int FreeCount;
    public int Carved;
    public int Outstanding;
    public bool InAvailableList;
    public bool Released;
    public SlabChunk? Prev;
    public SlabChunk? Next;

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

    /// <summary>
    /// Invalidates every handle of a block still handed out, at Dispose, before the memory is freed: its stamp moves on
    /// (odd to even: <c>IsAllocated</c> false, Delete refused) and a tracked handle's address is nulled (its accessors throw).
    /// </summary>
    public void InvalidateLiveStamps()
    {
        for (int i = 0; i < Stamps.Length; i++)
        {
            if ((Stamps[i] & 1) != 0) Stamps[i]++;
        }
        if (Handles is null) return;
        for (int i = 0; i < Handles.Length; i++)
        {
            if (Handles[i].Handle is { } handle)
            {
                handle.Address = null; // plain: Dispose is not thread-safe with other calls (documented)
                Handles[i].Handle = null;
            }
        }
    }
}
