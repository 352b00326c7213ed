using System.Runtime.CompilerServices;

namespace Manaloc.Memory;

public sealed unsafe partial class TypeAllocator
{
    /// <summary>Allocates a zeroed record of a compiled record type and returns a checked struct handle to it.</summary>
    /// <remarks>
    /// Thread-safe. The generated <c>XxxRef.New(allocator)</c> calls this. No managed allocation: the block comes from the
    /// calling thread's slab cache, stamped, tagged for the leak report; the handle is a value. Works the same in a checked
    /// and an unchecked allocator: the handle's kind decides the checks.
    /// </remarks>
    /// <exception cref="ArgumentNullException"><paramref name="type"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public RecordRef NewRef(CompiledRecordType type)
    {
        byte* p = AllocateRecord(type, out SlabChunk chunk, out uint generation);
        return new RecordRef(p, StampPointer(p, chunk), generation, chunk);
    }

    /// <summary>Allocates a zeroed record of a compiled record type and returns an unchecked struct handle to it.</summary>
    /// <remarks>Thread-safe; no managed allocation. See <see cref="UncheckedRecordRef"/> for what is not checked.</remarks>
    /// <exception cref="ArgumentNullException"><paramref name="type"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public UncheckedRecordRef NewUncheckedRef(CompiledRecordType type)
    {
        byte* p = AllocateRecord(type, out SlabChunk chunk, out uint generation);
        return new UncheckedRecordRef(p, StampPointer(p, chunk), generation);
    }

    /// <summary>
    /// The stamp in a class block's trailer (native memory that lives while its chunk object does, so a checked handle,
    /// which references the chunk, can always read it), or null for a dedicated block, whose stamp is a field of its
    /// chunk object (<see cref="SlabChunk.DedicatedStamp"/>) and cannot be pointed at.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static uint* StampPointer(byte* p, SlabChunk chunk) => chunk.ClassIndex >= 0 ? (uint*)(p + chunk.StampOffset) : null;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private byte* AllocateRecord(CompiledRecordType type, out SlabChunk chunk, out uint generation)
    {
        if (type is null) ThrowHelper.ThrowArgumentNull(nameof(type));
        if (_disposed) ThrowHelper.ThrowDisposed(nameof(TypeAllocator));
        var record = type.Unchecked; // size, class and tag are the same in every mode
        var cache = _slab.CurrentCache; // one thread-static read for the whole New
        byte* p = _slab.AllocateStamped(cache, record.ClassIndex, record.BlockSize, record.Alignment, out chunk, out generation);
        ClearRecord(p, record);
        chunk.TagOf(p) = record.Tag;
        if (_stacks is not null) CaptureStack(p);
        return p;
    }

    /// <summary>Frees the record of a checked struct handle; every copy of the handle is invalid afterwards.</summary>
    /// <remarks>Thread-safe; any thread may delete. Of two racing Deletes of one record exactly one succeeds (the stamp
    /// moves by compare-exchange before the block is freed).</remarks>
    /// <exception cref="ArgumentException">The handle is default or belongs to another allocator.</exception>
    /// <exception cref="InvalidOperationException">The record was already deleted.</exception>
    /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void DeleteRef(RecordRef handle)
    {
        if (handle.Chunk is { } chunk && chunk.Owner == _slab && !_disposed
            && NativeSlabAllocator.TryReleaseStamp(ref chunk.StampOf(handle.Address), handle.Generation))
        {
            if (_stacks is not null) _stacks.TryRemove((nint)handle.Address, out _);
            _slab.FreeStamped(_slab.CurrentCache, handle.Address, chunk);
            return;
        }
        ThrowRefDeleteFailure(handle.Chunk);
    }

    /// <summary>Frees the record of an unchecked struct handle.</summary>
    /// <remarks>Thread-safe. The stamp still moves by compare-exchange, so a second Delete throws while the record's
    /// chunk is in use; see <see cref="UncheckedRecordRef"/> for the undefined cases.</remarks>
    /// <exception cref="ArgumentException">The handle is default.</exception>
    /// <exception cref="InvalidOperationException">The record was already deleted.</exception>
    /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void DeleteRef(UncheckedRecordRef handle)
    {
        if (handle.Address != null && !_disposed)
        {
            if (handle.Stamp != null)
            {
                // A class block: the stamp is in its trailer, the chunk found from the address.
                if (NativeSlabAllocator.TryReleaseStamp(ref *handle.Stamp, handle.Generation))
                {
                    if (_stacks is not null) _stacks.TryRemove((nint)handle.Address, out _);
                    _slab.FreeStamped(_slab.CurrentCache, handle.Address, _slab.ChunkOf(handle.Address));
                    return;
                }
            }
            else if (_slab.DedicatedChunkOf(handle.Address) is { IsRecordArray: false } chunk
                && NativeSlabAllocator.TryReleaseStamp(ref chunk.DedicatedStamp, handle.Generation))
            {
                // A dedicated block (a record larger than the largest class): found by address under the large-block lock.
                if (_stacks is not null) _stacks.TryRemove((nint)handle.Address, out _);
                _slab.FreeStamped(_slab.CurrentCache, handle.Address, chunk);
                return;
            }
        }
        ThrowUncheckedDeleteFailure(handle.Address == null);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowUncheckedDeleteFailure(bool isDefault)
    {
        if (isDefault) ThrowHelper.ThrowNotOurs("handle", "The record handle is default: it was never allocated.");
        if (_disposed) ThrowHelper.ThrowDisposed(nameof(TypeAllocator));
        Diagnostics.ManalocEventSource.Log.DoubleFree("UncheckedRecordRef");
        ThrowHelper.ThrowInvalidOperation("The record was already deleted.");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowRefDeleteFailure(SlabChunk? chunk)
    {
        if (chunk is null) ThrowHelper.ThrowNotOurs("handle", "The record handle is default: it was never allocated.");
        if (chunk.Owner != _slab)
        {
            if (_disposed) ThrowHelper.ThrowDisposed(nameof(TypeAllocator));
            ThrowHelper.ThrowNotOurs("handle", $"The record belongs to another TypeAllocator, not '{Name}'.");
        }
        if (_disposed) ThrowHelper.ThrowDisposed(nameof(TypeAllocator));
        Diagnostics.ManalocEventSource.Log.DoubleFree("RecordRef");
        ThrowHelper.ThrowInvalidOperation("The record was already deleted.");
    }
}
