using System.ComponentModel;
using System.Runtime.CompilerServices;

namespace Manaloc.Memory;

/// <summary>
/// A checked struct handle to one record from <see cref="TypeAllocator.NewRef"/>: its address, the
/// slot's generation stamp and the chunk that keeps the stamp table alive. No managed object per
/// record; the generated <c>XxxRef</c> structs of <see cref="NativeRecordAttribute"/> interfaces wrap it.
/// </summary>
/// <remarks>
/// <para>Every access compares the slot's current stamp with the handle's generation (one load and one
/// compare on top of the field's own), so a use after <see cref="TypeAllocator.DeleteRef(RecordRef)"/> — of
/// this copy or any other copy of the handle, also after the slot holds a new record — or after the
/// allocator's Dispose throws instead of touching the block. The stamp sits in the block's trailer, whose
/// memory is freed only once no object references its chunk, and the handle references it, so the check itself
/// never reads freed memory; a record larger than the largest slab class has its stamp in its chunk object.</para>
/// <para>What is exact and what is best-effort: a Delete or Dispose ordered before a use by the program
/// (same thread, or published through a lock, a volatile write, a task hand-off…) is always detected;
/// of two racing Deletes of one record exactly one succeeds (compare-exchange on the stamp). A use racing
/// a Delete on another thread may pass its check just before the stamp moves and then read or write the
/// block as it is being freed or reused: that is a data race in the program, not detected.</para>
/// <para><c>default</c> is not allocated: its accessors and Delete throw. Copies are equal when they
/// name the same record and generation. Thread safety: an immutable value.</para>
/// </remarks>
public readonly unsafe struct RecordRef : IEquatable<RecordRef>
{
    internal readonly byte* Address;
    internal readonly uint* Stamp;
    internal readonly SlabChunk? Chunk;
    internal readonly uint Generation;

    internal RecordRef(byte* address, uint* stamp, uint generation, SlabChunk chunk)
    {
        Address = address;
        Stamp = stamp;
        Generation = generation;
        Chunk = chunk;
    }

    /// <summary>True while the record is allocated: not deleted, allocator not disposed. False for <c>default</c>.</summary>
    public bool IsAllocated => Stamp != null ? *Stamp == Generation : IsLiveDedicated(Chunk, Generation);

    /// <summary>A record larger than the largest slab class has no stamp in native memory: its chunk object holds it.</summary>
    private static bool IsLiveDedicated(SlabChunk? chunk, uint generation) => chunk is not null && chunk.ClassIndex < 0 && chunk.DedicatedStamp == generation;

    /// <summary>The same record without checks (24 bytes, no managed reference); see <see cref="UncheckedRecordRef"/>.</summary>
    public UncheckedRecordRef AsUnchecked() => new(Address, Stamp, Generation);

    /// <summary>The field at <paramref name="offset"/> after checking that the record is allocated.</summary>
    /// <remarks>For generated code: the offset is a layout constant and is not bounds-checked.</remarks>
    /// <exception cref="InvalidOperationException">The record was deleted, or the handle is <c>default</c>.</exception>
    /// <exception cref="ObjectDisposedException">The record's allocator was disposed.</exception>
    [EditorBrowsable(EditorBrowsableState.Never)]
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public ref T FieldAt<T>(int offset)
    {
        uint* stamp = Stamp;
        if (stamp == null || *stamp != Generation)
        {
            // Cold: default, deleted, disposed, or a dedicated block (whose stamp is its chunk's field).
            if (!IsLiveDedicated(Chunk, Generation)) throw StaleException(Chunk);
        }
        // The chunk keeps the stamp's memory: it must stay reachable until the stamp was read (no cost: no code).
        GC.KeepAlive(Chunk);
        return ref Unsafe.AsRef<T>(Address + offset);
    }

    // Static, with the chunk passed by value: an instance call would take the handle's address, and a struct whose address
    // is taken stays in memory instead of registers (measured: 7x a class's get+set). And "throw StaleException()" rather
    // than a throwing call: a block that ends in throw is cold to the JIT, so nothing is kept live across it (a call that
    // looks like it may return made the JIT spill the value being written).
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static Exception StaleException(SlabChunk? chunk)
    {
        if (chunk is null) return new InvalidOperationException("The record handle is default: it was never allocated.");
        if (chunk.Owner.IsDisposed)
        {
            const string What = "TypeAllocator (the record's allocator)";
            return new ObjectDisposedException(What, $"The {What} has been disposed; its memory was freed.");
        }
        Diagnostics.ManalocEventSource.Log.UseAfterFree("RecordRef");
        return new InvalidOperationException("The record was used through a struct handle after it was deleted.");
    }

    /// <summary>Same record and generation.</summary>
    public bool Equals(RecordRef other) => Address == other.Address && Generation == other.Generation && Stamp == other.Stamp && ReferenceEquals(Chunk, other.Chunk);

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is RecordRef other && Equals(other);

    /// <inheritdoc/>
    public override int GetHashCode() => HashCode.Combine((nuint)Address, Generation);

    /// <summary>Same record and generation.</summary>
    public static bool operator ==(RecordRef left, RecordRef right) => left.Equals(right);

    /// <summary>Not the same record and generation.</summary>
    public static bool operator !=(RecordRef left, RecordRef right) => !left.Equals(right);

    /// <inheritdoc/>
    public override string ToString()
        => Chunk is null ? "RecordRef (default)" : $"RecordRef 0x{(nuint)Address:x} ({(IsAllocated ? "allocated" : "not allocated")})";
}
