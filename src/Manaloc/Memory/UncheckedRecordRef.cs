using System.ComponentModel;
using System.Runtime.CompilerServices;

namespace Manaloc.Memory;

/// <summary>
/// An unchecked struct handle to one record from <see cref="TypeAllocator.NewUncheckedRef"/>: the address,
/// the slot's stamp pointer and the generation, 24 bytes and no managed reference (an array of them
/// costs the GC nothing to mark). The generated <c>XxxUncheckedRef</c> structs wrap it.
/// </summary>
/// <remarks>
/// <para>Accessors are bare loads and stores: a use after Delete or after the allocator's Dispose is
/// undefined behaviour (it reads or writes whatever the block holds by then, or faults once the chunk
/// went back to the system). Delete compares and moves the stamp, so a second Delete of a record whose
/// chunk is still in use throws; Delete after the allocator's Dispose throws. Delete of a handle whose
/// chunk was given back (every record of it deleted and the chunk released), or of another allocator's
/// handle, is undefined. Use <see cref="RecordRef"/> when those must be caught.</para>
/// <para>Thread safety: an immutable value; as <see cref="RecordRef"/>, of two racing Deletes exactly one
/// succeeds.</para>
/// </remarks>
public readonly unsafe struct UncheckedRecordRef : IEquatable<UncheckedRecordRef>
{
    internal readonly byte* Address;
    internal readonly uint* Stamp;
    internal readonly uint Generation;

    internal UncheckedRecordRef(byte* address, uint* stamp, uint generation)
    {
        Address = address;
        Stamp = stamp;
        Generation = generation;
    }

    /// <summary>True while the record is allocated. Reads the block's stamp: valid while the record's chunk is in use (undefined for a
    /// handle whose chunk was released). A record larger than the largest slab class keeps its stamp in its chunk object,
    /// which this handle does not reference: for those, true for any handle that is not <c>default</c>.</summary>
    public bool IsAllocated => Stamp != null ? *Stamp == Generation : Address != null;

    /// <summary>The field at <paramref name="offset"/>, with no check (for generated code: the offset is a layout constant).</summary>
    [EditorBrowsable(EditorBrowsableState.Never)]
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public ref T FieldAt<T>(int offset) => ref Unsafe.AsRef<T>(Address + offset);

    /// <summary>Same record and generation.</summary>
    public bool Equals(UncheckedRecordRef other) => Address == other.Address && Generation == other.Generation && Stamp == other.Stamp;

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is UncheckedRecordRef other && Equals(other);

    /// <inheritdoc/>
    public override int GetHashCode() => HashCode.Combine((nuint)Address, Generation);

    /// <summary>Same record and generation.</summary>
    public static bool operator ==(UncheckedRecordRef left, UncheckedRecordRef right) => left.Equals(right);

    /// <summary>Not the same record and generation.</summary>
    public static bool operator !=(UncheckedRecordRef left, UncheckedRecordRef right) => !left.Equals(right);

    /// <inheritdoc/>
    public override string ToString() => Address == null ? "UncheckedRecordRef (default)" : $"UncheckedRecordRef 0x{(nuint)Address:x}";
}
