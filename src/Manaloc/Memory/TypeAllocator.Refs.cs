using System.Runtime.CompilerServices;
using Manaloc.Memory.CompilerServices;

namespace Manaloc.Memory;

public sealed unsafe partial class TypeAllocator
{
    /// <summary>Allocates a zeroed record of a compiled record type and returns a checked struct handle to it.</summary>
    /// <remarks>
    /// Thread-safe. The generated <c>XxxRef.New(allocator)</c> calls this. No managed allocation: the block comes from the
    /// calling thread's slab cache (found through a thread-static; hold a <see cref="ThreadHeap"/> to skip that lookup),
    /// stamped, tagged for the leak report; the handle is a value. Works the same in a checked and an unchecked
    /// allocator: the handle's kind decides the checks.
    /// </remarks>
    /// <exception cref="ArgumentNullException"><paramref name="type"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public RecordRef NewRef(CompiledRecordType type)
    {
        var record = RecordOf(type);
        var block = AllocateRecord(_slab.CurrentCache.Bins, record);
        return new RecordRef(block.Address, block.Generation, record.StampOffset);
    }

    /// <summary>Allocates a zeroed record of a compiled record type and returns an unchecked struct handle to it.</summary>
    /// <remarks>Thread-safe; no managed allocation. See <see cref="UncheckedRecordRef"/> for what is not checked.</remarks>
    /// <exception cref="ArgumentNullException"><paramref name="type"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public UncheckedRecordRef NewUncheckedRef(CompiledRecordType type) => NewRef(type).AsUnchecked(); // the block is the same; only the handle's checks differ

    /// <summary>Frees the record of a checked struct handle; every copy of the handle is invalid afterwards.</summary>
    /// <remarks>Thread-safe; any thread may delete. Of two racing Deletes of one record exactly one succeeds (the stamp
    /// moves by compare-exchange before the block is freed).</remarks>
    /// <exception cref="ArgumentException">The handle is default or belongs to another allocator.</exception>
    /// <exception cref="InvalidOperationException">The record was already deleted.</exception>
    /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void DeleteRef(RecordRef handle)
    {
        if (_disposed) ThrowDisposed();
        DeleteRecord(_slab.CurrentCache.Bins, handle);
    }

    /// <summary>Frees the record of an unchecked struct handle.</summary>
    /// <remarks>Thread-safe for different records. A second Delete of one record ordered after the first throws; two
    /// racing on two threads are undefined (see <see cref="UncheckedRecordRef"/>).</remarks>
    /// <exception cref="ArgumentException">The handle is default or belongs to another allocator.</exception>
    /// <exception cref="InvalidOperationException">The record was already deleted.</exception>
    /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void DeleteRef(UncheckedRecordRef handle)
    {
        if (_disposed) ThrowDisposed();
        DeleteUncheckedRecord(_slab.CurrentCache.Bins, handle);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static RecordType RecordOf(CompiledRecordType type)
    {
        if (type is null) ThrowHelper.ThrowArgumentNull(nameof(type));
        return type.Unchecked; // size, class, stamp offset and tag are the same in every mode
    }

    /// <summary>A record's block and its generation, returned in registers (an out parameter would live on the stack).</summary>
    private readonly struct RecordBlock(byte* address, uint generation)
    {
        public readonly byte* Address = address;
        public readonly uint Generation = generation;
    }

    /// <summary>A zeroed, stamped, tagged record block from <paramref name="bins"/> (the calling thread's cache's, checked by the caller).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private RecordBlock AllocateRecord(NativeSlabAllocator.Bin* bins, RecordType record)
    {
        byte* p;
        uint generation;
        int stampOffset = record.StampOffset;
        if (record.ClassIndex >= 0)
        {
            // A class block: its stamp and tag are in its trailer at constants of the record type, no chunk lookup. Plain
            // writes: this thread owns the free block; a stale handle's check or compare-exchange expects an older odd
            // value and fails against either the old even one or this new odd one.
            int cls = record.ClassIndex;
            p = _slab.Pop(bins + cls, cls);
            ref uint stamp = ref *(uint*)(p + stampOffset);
            generation = stamp = (stamp + 1) | 1; // free stamps are even, so this is the next value: odd, live
            *(uint*)(p + stampOffset - 4) = record.TagAndClass; // the tag (leak report) and the class (Delete's free list)
            ClearRecord(p, record);
        }
        else
        {
            return AllocateLargeRecord(record); // its own stack capture
        }
        if (_stacks is not null) CaptureStack(p);
        return new RecordBlock(p, generation);
    }

    /// <summary>A record larger than the largest class: a block of its own from the process-wide pool, laid out like a class block (stamp and tag at the end).</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private RecordBlock AllocateLargeRecord(RecordType record)
    {
        byte* p = _slab.AllocateLargeRecord(record.LargeLength, record.Alignment, out _);
        ref uint stamp = ref *(uint*)(p + record.StampOffset);
        uint generation = stamp = (stamp + 1) | 1;
        *(ushort*)(p + record.StampOffset - 4) = record.Tag;
        ClearRecord(p, record);
        if (_stacks is not null) CaptureStack(p);
        return new RecordBlock(p, generation);
    }

    /// <summary>The checked Delete: the owner's token in the chunk header, then a compare-exchange of the stamp.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void DeleteRecord(NativeSlabAllocator.Bin* bins, RecordRef handle)
    {
        byte* p = handle.Address;
        int stampOffset = handle.StampOffset;
        if (stampOffset > 0 && !RecordChunks.IsLarge(stampOffset))
        {
            byte* chunk = SizeClasses.ChunkStart(p);
            if (*(long*)(chunk + 16) == _slab.RecordToken && NativeSlabAllocator.TryReleaseStamp(ref *(uint*)(p + stampOffset), handle.Generation))
            {
                if (_stacks is not null) _stacks.TryRemove((nint)p, out _);
                int cls = ((int*)chunk)[1];
                _slab.Push(bins + cls, p, cls);
                return;
            }
        }
        else if (stampOffset > 0 && DeleteLarge(p, handle.Generation, stampOffset))
        {
            return;
        }
        ThrowRefDeleteFailure(p, handle.Generation, stampOffset);
    }

    /// <summary>The unchecked Delete: a plain load and store of the stamp (no atomic), and no owner test (a foreign handle's Delete is undefined).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void DeleteUncheckedRecord(NativeSlabAllocator.Bin* bins, UncheckedRecordRef handle)
    {
        byte* p = handle.Address;
        int stampOffset = handle.StampOffset;
        if (stampOffset > 0 && !RecordChunks.IsLarge(stampOffset))
        {
            ref uint stamp = ref *(uint*)(p + stampOffset);
            if (stamp == handle.Generation)
            {
                stamp = handle.Generation + 1;
                if (_stacks is not null) _stacks.TryRemove((nint)p, out _);
                int cls = *(ushort*)(p + stampOffset - 2); // written by New beside the tag, on the stamp's line
                _slab.Push(bins + cls, p, cls);
                return;
            }
        }
        else if (stampOffset > 0 && DeleteLarge(p, handle.Generation, stampOffset))
        {
            return;
        }
        ThrowRefDeleteFailure(p, handle.Generation, stampOffset);
    }

    /// <summary>A record larger than the largest class: found by address under the large-block lock (compare-exchange in both forms: the lock is the cost here).</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool DeleteLarge(byte* p, uint generation, int stampOffset)
    {
        if (_slab.DedicatedChunkOf(p) is not { Home: not null } chunk || !NativeSlabAllocator.TryReleaseStamp(ref *(uint*)(p + stampOffset), generation)) return false;
        if (_stacks is not null) _stacks.TryRemove((nint)p, out _);
        _slab.FreeDedicated(chunk, deferred: false);
        return true;
    }

    /// <summary>The owner token of a record's memory: in its chunk's header, or in a large record's trailer.</summary>
    private static long TokenOf(byte* p, int stampOffset)
        => RecordChunks.IsLarge(stampOffset) ? *(long*)(p + stampOffset + 4 - 16) : *(long*)(SizeClasses.ChunkStart(p) + 16);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowRefDeleteFailure(byte* p, uint generation, int stampOffset)
    {
        if (stampOffset == 0) ThrowHelper.ThrowNotOurs("handle", "The record handle is default: it was never allocated.");
        if (_disposed) ThrowDisposed();
        if (TokenOf(p, stampOffset) != _slab.RecordToken && Volatile.Read(ref *(uint*)(p + stampOffset)) == generation)
        {
            ThrowHelper.ThrowNotOurs("handle", $"The record belongs to another TypeAllocator, not '{Name}'.");
        }
        if (RecordChunks.WasDisposed(p, generation, stampOffset, out string? owner))
        {
            ThrowHelper.ThrowDisposed($"TypeAllocator '{owner}' (the record's allocator)");
        }
        Diagnostics.ManalocEventSource.Log.DoubleFree("RecordRef");
        ThrowHelper.ThrowInvalidOperation("The record was already deleted.");
    }
}
