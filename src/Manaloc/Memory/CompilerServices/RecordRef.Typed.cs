using System.ComponentModel;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Manaloc.Memory.CompilerServices;

/// <summary>
/// A checked struct handle to one record of a generated type: its address and the slot's generation, 16 bytes and no
/// managed reference. The generated <c>XxxRef</c> structs of <see cref="NativeRecordAttribute"/> interfaces wrap it; the
/// stamp's place is a constant of <typeparamref name="TRecord"/> (the generated registration), so the handle need not
/// carry it as <see cref="RecordRef"/> does.
/// </summary>
/// <typeparam name="TRecord">The record's generated registration struct (generated code names it).</typeparam>
/// <remarks>The checks and what is exact under races are those of <see cref="RecordRef"/>. <c>default</c> is not
/// allocated. Thread safety: an immutable value.</remarks>
// Not packed to 12 bytes, though address and generation fit: in an array of 12-byte elements one address in 16 straddles
// a cache line, where a store and a load racing on the element (a data race, but in safe code) tear it, and the stamp check
// would then read through a wild address and crash the process (a test did, within seconds). At 16 bytes the address is
// always 8-byte aligned, so a race tears only between the address and the generation, and the check refuses the mix.
[EditorBrowsable(EditorBrowsableState.Never)]
public readonly unsafe struct RecordRef<TRecord> : IEquatable<RecordRef<TRecord>> where TRecord : struct, ICompiledRecordFactory
{
    internal readonly byte* Address;
    internal readonly uint Generation;

    internal RecordRef(byte* address, uint generation)
    {
        Address = address;
        Generation = generation;
    }

    /// <summary>The typed form of <paramref name="handle"/>, a handle of the same record type (default stays default).</summary>
    /// <exception cref="ArgumentException"><paramref name="handle"/> is a handle of a record of another size.</exception>
    /// <exception cref="InvalidOperationException"><typeparamref name="TRecord"/> is not a generated registration.</exception>
    public static RecordRef<TRecord> From(RecordRef handle)
        => CompiledRecordConstants<TRecord>.IsHandleOfThisRecord(handle.StampOffset, nameof(handle)) ? new(handle.Address, handle.Generation) : default;

    /// <summary>The untyped handle to the same record (16 bytes: it carries the stamp's place).</summary>
    public RecordRef Untyped => Address == null ? default : new(Address, Generation, CompiledRecordConstants<TRecord>.StampOffset);

    /// <summary>True while the record is allocated: not deleted, allocator not disposed. False for <c>default</c>.</summary>
    public bool IsAllocated => Untyped.IsAllocated;

    /// <summary>The same record without checks.</summary>
    public UncheckedRecordRef<TRecord> AsUnchecked() => new(Address, Generation);

    /// <summary>Allocates a zeroed record from the calling thread's <paramref name="heap"/> (the generated handle's <c>New(heap)</c>).</summary>
    /// <remarks>The record's layout is a set of JIT constants of <typeparamref name="TRecord"/>, so no record-type object is read.</remarks>
    /// <exception cref="InvalidOperationException">Called on another thread than the heap's, or <typeparamref name="TRecord"/> is not a generated registration.</exception>
    /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static RecordRef<TRecord> New(TypeAllocator.ThreadHeap heap) => heap.New<TRecord>();

    /// <summary>Frees the record through the calling thread's <paramref name="heap"/> (the generated handle's <c>Delete(heap)</c>).</summary>
    /// <exception cref="ArgumentException">The handle is default or belongs to another allocator.</exception>
    /// <exception cref="InvalidOperationException">The record was already deleted, or the heap is used on another thread.</exception>
    /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Delete(TypeAllocator.ThreadHeap heap) => heap.Delete(this);

    /// <summary>The field at <paramref name="offset"/> after checking that the record is allocated.</summary>
    /// <remarks>For generated code: the offset is a layout constant and is not bounds-checked.</remarks>
    /// <exception cref="InvalidOperationException">The record was deleted, or the handle is <c>default</c>.</exception>
    /// <exception cref="ObjectDisposedException">The record's allocator was disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public ref T FieldAt<T>(int offset)
    {
        byte* address = Address;
        // As RecordRef.FieldAt: a throw, not a throwing call, so a get and a set of one handle load the stamp once. The
        // null test is default's (its stamp offset is a constant here, not 0).
        if (address == null || *(uint*)(address + CompiledRecordConstants<TRecord>.StampOffset) != Generation)
        {
            throw RecordRef.StaleException(address, Generation, address == null ? 0 : CompiledRecordConstants<TRecord>.StampOffset, CompiledRecordConstants<TRecord>.Type?.Interface);
        }
        return ref Unsafe.AsRef<T>(address + offset);
    }

    /// <summary>Same record and generation.</summary>
    public bool Equals(RecordRef<TRecord> other) => Address == other.Address && Generation == other.Generation;

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is RecordRef<TRecord> other && Equals(other);

    /// <inheritdoc/>
    public override int GetHashCode() => HashCode.Combine((nuint)Address, Generation);

    /// <inheritdoc/>
    public override string ToString() => Untyped.ToString();
}

/// <summary>
/// An unchecked struct handle to one record of a generated type: address and generation, 16 bytes, no managed
/// reference. The generated <c>XxxUncheckedRef</c> structs wrap it; what is not checked is said on
/// <see cref="UncheckedRecordRef"/>.
/// </summary>
/// <typeparam name="TRecord">The record's generated registration struct (generated code names it).</typeparam>
[EditorBrowsable(EditorBrowsableState.Never)]
public readonly unsafe struct UncheckedRecordRef<TRecord> : IEquatable<UncheckedRecordRef<TRecord>> where TRecord : struct, ICompiledRecordFactory
{
    internal readonly byte* Address;
    internal readonly uint Generation;

    internal UncheckedRecordRef(byte* address, uint generation)
    {
        Address = address;
        Generation = generation;
    }

    /// <summary>The typed form of <paramref name="handle"/>, a handle of the same record type (default stays default).</summary>
    /// <exception cref="ArgumentException"><paramref name="handle"/> is a handle of a record of another size.</exception>
    /// <exception cref="InvalidOperationException"><typeparamref name="TRecord"/> is not a generated registration.</exception>
    public static UncheckedRecordRef<TRecord> From(UncheckedRecordRef handle)
        => CompiledRecordConstants<TRecord>.IsHandleOfThisRecord(handle.StampOffset, nameof(handle)) ? new(handle.Address, handle.Generation) : default;

    /// <summary>The untyped handle to the same record (16 bytes: it carries the stamp's place).</summary>
    public UncheckedRecordRef Untyped => Address == null ? default : new(Address, Generation, CompiledRecordConstants<TRecord>.StampOffset);

    /// <summary>True while the record is allocated (reads the slot's stamp, whose memory is never freed).</summary>
    public bool IsAllocated => Untyped.IsAllocated;

    /// <summary>Allocates a zeroed record from the calling thread's <paramref name="heap"/> (the generated handle's <c>New(heap)</c>).</summary>
    /// <exception cref="InvalidOperationException">Called on another thread than the heap's, or <typeparamref name="TRecord"/> is not a generated registration.</exception>
    /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static UncheckedRecordRef<TRecord> New(TypeAllocator.ThreadHeap heap) => heap.NewUnchecked<TRecord>();

    /// <summary>Frees the record through the calling thread's <paramref name="heap"/> (the generated handle's <c>Delete(heap)</c>): the
    /// stamp's plain test and store, as <see cref="TypeAllocator.ThreadHeap.Delete(UncheckedRecordRef)"/>.</summary>
    /// <exception cref="ArgumentException">The handle is default.</exception>
    /// <exception cref="InvalidOperationException">The record was already deleted, or the heap is used on another thread.</exception>
    /// <exception cref="ObjectDisposedException">The allocator has been disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Delete(TypeAllocator.ThreadHeap heap) => heap.Delete(this);

    /// <summary>The field at <paramref name="offset"/>, with no check (for generated code: the offset is a layout constant).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public ref T FieldAt<T>(int offset) => ref Unsafe.AsRef<T>(Address + offset);

    /// <summary>Same record and generation.</summary>
    public bool Equals(UncheckedRecordRef<TRecord> other) => Address == other.Address && Generation == other.Generation;

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is UncheckedRecordRef<TRecord> other && Equals(other);

    /// <inheritdoc/>
    public override int GetHashCode() => HashCode.Combine((nuint)Address, Generation);

    /// <inheritdoc/>
    public override string ToString() => Untyped.ToString();
}
