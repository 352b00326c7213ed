using System.ComponentModel;
using System.Runtime.CompilerServices;

namespace Manaloc.Memory;

/// <summary>
/// A checked struct handle to one record from <see cref="TypeAllocator.NewRef"/>: its address, the slot's generation
/// stamp and where the stamp is. 16 bytes and no managed reference, so an array of them is one object the collector
/// never scans. The generated <c>XxxRef</c> structs of <see cref="NativeRecordAttribute"/> interfaces wrap
/// <see cref="CompilerServices.RecordRef{TRecord}"/> instead (as large, but their stamp's place is a constant of the type) and give this one as <c>Handle</c>.
/// </summary>
/// <remarks>
/// <para>Every access compares the slot's current stamp with the handle's generation (one load and one compare on top
/// of the field's own; the stamp is in the block's last 4 bytes), so a use after
/// <see cref="TypeAllocator.DeleteRef(RecordRef)"/> — of this copy or any other copy of the handle, also after the slot
/// holds a new record, also after another TypeAllocator reuses the memory — or after the allocator's Dispose throws
/// instead of touching the block. The check itself never reads freed memory: a TypeAllocator's chunks are never given
/// back to the system, only reused by TypeAllocators, with every slot keeping its place and its stamps rising. A record
/// larger than the largest slab class (8 KB) has a block of its own laid out the same way (its stamp at its end), which
/// is pooled and never freed either.</para>
/// <para>What is exact and what is best-effort: a Delete or Dispose ordered before a use by the program (same thread,
/// or published through a lock, a volatile write, a task hand-off…) is always detected; of two racing Deletes of one
/// record exactly one succeeds (compare-exchange on the stamp). A use racing a Delete on another thread may pass its
/// check just before the stamp moves and then read or write the block as it is being freed or reused: that is a data
/// race in the program, not detected. After 2^31 reuses of one slot a stamp wraps round to an old generation.
/// Whether a failed check says "deleted" (<see cref="InvalidOperationException"/>) or "disposed"
/// (<see cref="ObjectDisposedException"/>) is exact while the record's memory has had fewer than 16 owners since.</para>
/// <para><c>default</c> is not allocated: its accessors and Delete throw. Copies are equal when they name the same
/// record and generation. Thread safety: an immutable value.</para>
/// </remarks>
public readonly unsafe struct RecordRef : IEquatable<RecordRef>
{
    internal readonly byte* Address;
    internal readonly uint Generation;
    /// <summary>The stamp's offset from <see cref="Address"/> (the block's last 4 bytes; always positive), or 0 for default.</summary>
    internal readonly int StampOffset;

    internal RecordRef(byte* address, uint generation, int stampOffset)
    {
        Address = address;
        Generation = generation;
        StampOffset = stampOffset;
    }

    /// <summary>True while the record is allocated: not deleted, allocator not disposed. False for <c>default</c>.</summary>
    public bool IsAllocated => StampOffset > 0 && Volatile.Read(ref *(uint*)(Address + StampOffset)) == Generation;

    /// <summary>The same record without checks (16 bytes); see <see cref="UncheckedRecordRef"/>.</summary>
    public UncheckedRecordRef AsUnchecked() => new(Address, Generation, StampOffset);

    /// <summary>The field at <paramref name="offset"/> after checking that the record is allocated.</summary>
    /// <remarks>For generated code: the offset is a layout constant and is not bounds-checked.</remarks>
    /// <exception cref="InvalidOperationException">The record was deleted, or the handle is <c>default</c>.</exception>
    /// <exception cref="ObjectDisposedException">The record's allocator was disposed.</exception>
    [EditorBrowsable(EditorBrowsableState.Never)]
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public ref T FieldAt<T>(int offset)
    {
        byte* address = Address;
        int stampOffset = StampOffset;
        // "throw StaleException()" rather than a throwing call: a block that ends in throw is cold to the JIT, nothing is kept
        // live across it, and memory is unchanged along the fast path, so the check of a get followed by a set of the same
        // handle loads the stamp once (a slow path that returns would reload it after every call).
        if (stampOffset <= 0 || *(uint*)(address + stampOffset) != Generation) throw StaleException(address, Generation, stampOffset);
        return ref Unsafe.AsRef<T>(address + offset);
    }

    // Static, with the fields passed by value: an instance call would take the handle's address, and a struct whose address
    // is taken stays in memory instead of registers, on the fast path too.
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static Exception StaleException(byte* address, uint generation, int stampOffset, Type? recordInterface = null)
    {
        // The generated handles know their record's interface and name it; an untyped handle cannot tell (a deleted block
        // may hold another type's record by now).
        string record = recordInterface is null ? "record" : $"{RecordTypes.TypeName(recordInterface)} record";
        if (stampOffset == 0) return new InvalidOperationException($"The {record} handle is default: it was never allocated.");
        if (RecordChunks.WasDisposed(address, generation, stampOffset, out string? owner))
        {
            string what = $"TypeAllocator '{owner}' (the {record}'s allocator)";
            return new ObjectDisposedException(what, $"The {what} has been disposed; its records are gone.");
        }
        Diagnostics.ManalocEventSource.Log.UseAfterFree(recordInterface is null ? "RecordRef" : RecordTypes.TypeName(recordInterface));
        return new InvalidOperationException($"The {record} was used through a struct handle after it was deleted.");
    }

    /// <summary>Same record and generation.</summary>
    public bool Equals(RecordRef other) => Address == other.Address && Generation == other.Generation && StampOffset == other.StampOffset;

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
        => StampOffset == 0 ? "RecordRef (default)" : $"RecordRef 0x{(nuint)Address:x} ({(IsAllocated ? "allocated" : "not allocated")})";
}
