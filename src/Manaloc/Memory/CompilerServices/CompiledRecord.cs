using System.ComponentModel;
using System.Runtime.CompilerServices;

namespace Manaloc.Memory.CompilerServices;

/// <summary>
/// The base of the class implementations the Manaloc source generator writes for
/// <see cref="NativeRecordAttribute"/> interfaces: the compile-time twin of the run-time emitted classes.
/// </summary>
/// <remarks>For generated code only. Accessors read and write at constant offsets from the record's
/// address; the checked form compares the block's stamp with the handle's generation first, exactly as the
/// emitted checked classes do. Users do not derive from it: an instance not made
/// by a <see cref="TypeAllocator"/> has no record, and Delete refuses it.</remarks>
[EditorBrowsable(EditorBrowsableState.Never)]
public abstract unsafe class CompiledRecord : NativeRecord
{
    /// <summary>For generated code.</summary>
    // RS0022: by design this is the one door through which generated classes derive from NativeRecord (whose own
    // constructor is internal); the members it exposes to them are the field accessors below.
#pragma warning disable RS0022
    protected CompiledRecord()
#pragma warning restore RS0022
    {
    }

    /// <summary>The field at <paramref name="offset"/>, after comparing the block's stamp with the handle's generation (for
    /// generated code: the offset and <paramref name="stampOffset"/>, from <see cref="CompiledRecords.StampOffsetOf"/>, are
    /// constants).</summary>
    /// <exception cref="InvalidOperationException">The record was deleted.</exception>
    /// <exception cref="ObjectDisposedException">The record's allocator was disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    protected ref T CheckedField<T>(int offset, int stampOffset)
    {
        // The block's stamp against the handle's generation, as the emitted checked classes compare it: a copy of a
        // deleted handle (MemberwiseClone) still has its address, and must fail here too. The stamp is at a constant offset
        // in the block's trailer, whose memory a TypeAllocator never frees. No null test: a handle New made always has its
        // address (Delete and Dispose keep it; the stamp says the rest).
        byte* address = Address;
        if (*(uint*)(address + stampOffset) != Generation) throw StaleException();
        return ref Unsafe.AsRef<T>(address + offset);
    }

    /// <summary>The field at <paramref name="offset"/>, with no test (for generated code: unchecked allocators).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    protected ref T UncheckedField<T>(int offset) => ref Unsafe.AsRef<T>(Address + offset);
}

/// <summary>
/// The base of the record-array view and item classes the Manaloc source generator writes for <see cref="NativeRecordAttribute"/>
/// interfaces: a view or item keeps its array's chunk (see <see cref="NativeRecordView"/>).
/// </summary>
/// <remarks>For generated code only.</remarks>
[EditorBrowsable(EditorBrowsableState.Never)]
public abstract unsafe class CompiledRecordView : NativeRecordView
{
    /// <summary>For generated code.</summary>
#pragma warning disable RS0022 // the one door through which generated view classes derive from NativeRecordView
    protected CompiledRecordView()
#pragma warning restore RS0022
    {
    }

    /// <summary>The field at <paramref name="offset"/>, after a checked view's test: its address is null once the array was
    /// disposed (the array's enumerator and MoveTo compare its stamp once per move; for generated code).</summary>
    /// <exception cref="ObjectDisposedException">The array was disposed (the message names the array).</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    protected ref T ViewField<T>(int offset)
    {
        byte* address = Address;
        if (address == null) throw StaleException();
        return ref Unsafe.AsRef<T>(address + offset);
    }

    /// <summary>The field at <paramref name="offset"/>, after a checked item's test: the array chunk's stamp against the item's
    /// generation, which the array's Dispose (or its allocator's) moves on (for generated code).</summary>
    /// <exception cref="ObjectDisposedException">The array or its allocator was disposed (the message names which).</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    protected ref T ItemField<T>(int offset)
    {
        // An item is bound to one record and never tracked: the stamp says whether its array is alive. The chunk is never
        // null for an item (the array sets it before handing the item out), and its memory lives while the item does.
        if (Chunk!.DedicatedStamp != Generation) throw StaleException();
        return ref Unsafe.AsRef<T>(Address + offset);
    }

    /// <summary>The field at <paramref name="offset"/>, with no test (for generated code: an unchecked allocator's views and items).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    protected ref T UncheckedField<T>(int offset) => ref Unsafe.AsRef<T>(Address + offset);
}

/// <summary>Creates the generated classes of one <see cref="NativeRecordAttribute"/> interface (implemented by a generated struct, so the call is direct).</summary>
[EditorBrowsable(EditorBrowsableState.Never)]
public interface ICompiledRecordFactory
{
    /// <summary>A new, unbound instance of the checked class.</summary>
    static abstract CompiledRecord CreateChecked();

    /// <summary>A new, unbound instance of the unchecked class.</summary>
    static abstract CompiledRecord CreateUnchecked();

    /// <summary>A new, unbound instance of the checked record-array view class.</summary>
    static abstract CompiledRecordView CreateCheckedView();

    /// <summary>A new, unbound instance of the unchecked record-array view class (an unchecked allocator's array items use it too).</summary>
    static abstract CompiledRecordView CreateUncheckedView();

    /// <summary>A new, unbound instance of the checked record-array item class (an item stays on one record; its accessors
    /// compare the array's stamp).</summary>
    static abstract CompiledRecordView CreateCheckedItem();

    /// <summary>The System.Text.Json contract of <paramref name="generated"/>, one of this record's generated classes (each
    /// from <see cref="CompiledRecords.JsonContract{TRecord}"/>), or null for another type; what
    /// <see cref="NativeRecordJson.TypeInfoResolver"/> answers under source generation, with no dynamic code.</summary>
    /// <param name="generated">The run-time class System.Text.Json asks about.</param>
    /// <param name="options">The options the contract is for.</param>
    static virtual System.Text.Json.Serialization.Metadata.JsonTypeInfo? JsonContract(Type generated, System.Text.Json.JsonSerializerOptions options) => null;

    /// <summary>The record's registration, made on first use (the generated struct registers its record when read);
    /// null for a factory that no generator wrote.</summary>
    static virtual CompiledRecordType? Registration => null;
}
