using System.ComponentModel;
using System.Runtime.CompilerServices;

namespace Manaloc.Memory;

/// <summary>
/// Registration of compile-time records: the module initializer the Manaloc source generator writes for
/// each <see cref="NativeRecordAttribute"/> interface calls <see cref="Register{TInterface, TFactory}"/>,
/// after which <see cref="TypeAllocator.New{T}"/>, <see cref="TypeAllocator.NewArray{T}"/> and the struct
/// handles use the generated classes instead of Reflection.Emit (so they work under NativeAOT).
/// </summary>
/// <remarks>Thread-safe (registration takes the lock of the run-time type cache). For generated code.</remarks>
[EditorBrowsable(EditorBrowsableState.Never)]
public static unsafe class CompiledRecords
{
    /// <summary>Registers the generated classes of <typeparamref name="TInterface"/> with the layout the generator computed.</summary>
    /// <typeparam name="TInterface">The record interface.</typeparam>
    /// <typeparam name="TFactory">The generated struct that creates the checked and unchecked classes.</typeparam>
    /// <param name="size">Record size in bytes.</param>
    /// <param name="alignment">Record alignment.</param>
    /// <param name="fields">The fields, any order.</param>
    /// <returns>The registration, which the generated struct handles allocate with.</returns>
    /// <exception cref="InvalidOperationException">The layout does not hold on this runtime: a field's size differs from
    /// the runtime's (the generator assumes a 64-bit process), or a field lies outside the record.</exception>
    public static CompiledRecordType Register<TInterface, TFactory>(int size, int alignment, CompiledField[] fields)
        where TInterface : class
        where TFactory : struct, ICompiledRecordFactory
    {
        ArgumentNullException.ThrowIfNull(fields);
        var type = RecordTypes.RegisterCompiled(typeof(TInterface), size, alignment, fields,
            [&CreateChecked<TFactory>, &CreateUnchecked<TFactory>, &CreateCheckedView<TFactory>, &CreateUncheckedView<TFactory>, &CreateCheckedItem<TFactory>],
            [TFactory.CreateChecked().GetType(), TFactory.CreateUnchecked().GetType(), TFactory.CreateCheckedView().GetType(), TFactory.CreateUncheckedView().GetType(),
                TFactory.CreateCheckedItem().GetType()],
            Cache<TInterface>);
        CompiledRecordSlot<TFactory>.Type = type; // for RecordRef<TFactory> and the held heap's New<TFactory>
        return type;
    }

    /// <summary>Where a record of <paramref name="size"/> bytes aligned to <paramref name="alignment"/> has its stamp, from its
    /// address: the generated checked class passes it to its accessors as a constant (a static readonly field).</summary>
    /// <param name="size">Record size in bytes, as the generator computed it.</param>
    /// <param name="alignment">Record alignment.</param>
    /// <returns>The offset of the stamp in the record's block (its last 4 bytes).</returns>
    public static int StampOffsetOf(int size, int alignment)
        => RecordType.StampOffsetOf((nuint)Math.Max(size, 1), (nuint)Math.Max(alignment, 16));

    // TFactory is a struct, so these instantiations are exact (not shared): a plain function pointer, a direct call.
    private static NativeRecord CreateChecked<TFactory>() where TFactory : struct, ICompiledRecordFactory => TFactory.CreateChecked();

    private static NativeRecord CreateUnchecked<TFactory>() where TFactory : struct, ICompiledRecordFactory => TFactory.CreateUnchecked();

    private static NativeRecord CreateCheckedView<TFactory>() where TFactory : struct, ICompiledRecordFactory => TFactory.CreateCheckedView();

    private static NativeRecord CreateUncheckedView<TFactory>() where TFactory : struct, ICompiledRecordFactory => TFactory.CreateUncheckedView();

    private static NativeRecord CreateCheckedItem<TFactory>() where TFactory : struct, ICompiledRecordFactory => TFactory.CreateCheckedItem();

    private static void Cache<TInterface>(CompiledRecordType type) where TInterface : class
    {
        // Plain publication, as TypeAllocator.Resolve does: the record types are immutable and fully built.
        RecordTypeCache<TInterface>.Checked = type.Checked;
        RecordTypeCache<TInterface>.Unchecked = type.Unchecked;
        RecordTypeCache<TInterface>.CheckedView = type.CheckedView;
        RecordTypeCache<TInterface>.UncheckedView = type.UncheckedView;
        RecordTypeCache<TInterface>.CheckedItem = type.CheckedItem;
    }

    /// <summary>Runtime size of <paramref name="type"/>, for the registration's check.</summary>
    internal static int SizeOf(Type type) => RuntimeHelpers.SizeOf(type.TypeHandle);
}
