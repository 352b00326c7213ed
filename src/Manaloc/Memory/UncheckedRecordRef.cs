using System.ComponentModel;
using System.Runtime.CompilerServices;

namespace Manaloc.Memory;

/// <summary>
/// An unchecked struct handle to one record from <see cref="TypeAllocator.NewUncheckedRef"/>: the address, the
/// generation and where the stamp is, 16 bytes and no managed reference (an array of them costs the GC nothing to
/// mark). The generated <c>XxxUncheckedRef</c> structs wrap <see cref="CompilerServices.UncheckedRecordRef{TRecord}"/> and give
/// this one as <c>Handle</c>.
/// </summary>
/// <remarks>
/// <para>Accessors are bare loads and stores: a use after Delete or after the allocator's Dispose is undefined
/// behaviour (it reads or writes whatever the block holds by then, possibly another allocator's record; the memory itself
/// is never freed). Delete compares and moves the stamp with a plain load and store, so a
/// second Delete on the same thread (or ordered after the first) throws, and so does Delete after the allocator's
/// Dispose. Two Deletes of one record racing on two threads are undefined: both may free it. Use
/// <see cref="RecordRef"/> when those must be caught.</para>
/// <para>Thread safety: an immutable value.</para>
/// </remarks>
public readonly unsafe struct UncheckedRecordRef : IEquatable<UncheckedRecordRef>
{
    internal readonly byte* Address;
    internal readonly uint Generation;
    /// <summary>As <see cref="RecordRef"/>: the stamp's offset from <see cref="Address"/> (positive), or 0 for default.</summary>
    internal readonly int StampOffset;

    internal UncheckedRecordRef(byte* address, uint generation, int stampOffset)
    {
        Address = address;
        Generation = generation;
        StampOffset = stampOffset;
    }

    /// <summary>True while the record is allocated (reads the slot's stamp, whose memory is never freed).</summary>
    public bool IsAllocated => StampOffset > 0 && Volatile.Read(ref *(uint*)(Address + StampOffset)) == Generation;

    /// <summary>The field at <paramref name="offset"/>, with no check (for generated code: the offset is a layout constant).</summary>
    [EditorBrowsable(EditorBrowsableState.Never)]
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public ref T FieldAt<T>(int offset) => ref Unsafe.AsRef<T>(Address + offset);

    /// <summary>Same record and generation.</summary>
    public bool Equals(UncheckedRecordRef other) => Address == other.Address && Generation == other.Generation && StampOffset == other.StampOffset;

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is UncheckedRecordRef other && Equals(other);

    /// <inheritdoc/>
    public override int GetHashCode() => HashCode.Combine((nuint)Address, Generation);

    /// <summary>Same record and generation.</summary>
    public static bool operator ==(UncheckedRecordRef left, UncheckedRecordRef right) => left.Equals(right);

    /// <summary>Not the same record and generation.</summary>
    public static bool operator !=(UncheckedRecordRef left, UncheckedRecordRef right) => !left.Equals(right);

    /// <inheritdoc/>
    public override string ToString() => StampOffset == 0 ? "UncheckedRecordRef (default)" : $"UncheckedRecordRef 0x{(nuint)Address:x}";
}
