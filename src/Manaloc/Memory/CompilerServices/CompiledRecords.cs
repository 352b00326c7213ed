using System.ComponentModel;

namespace Manaloc.Memory.CompilerServices;

/// <summary>
/// Registration of compile-time records: the module initializer the Manaloc source generator writes for
/// each <see cref="NativeRecordAttribute"/> interface calls <see cref="Register{TInterface, TFactory}"/>,
/// after which <see cref="TypeAllocator.New{T}"/>, <see cref="TypeAllocator.NewArray{T}"/> and the struct
/// handles use the generated classes instead of Reflection.Emit (so they work under NativeAOT). The generator's
/// interceptors send calls of New, NewArray and PreGenerate with such an interface to <see cref="New{T}"/>,
/// <see cref="NewArray{T}"/> and <see cref="PreGenerate"/> here, which carry no trim/AOT annotation.
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
    /// <param name="fields">The fields, any order (each from <see cref="Field"/>).</param>
    /// <returns>The registration, which the generated struct handles allocate with.</returns>
    /// <exception cref="InvalidOperationException">The layout does not hold on this runtime: a field's size differs from
    /// the runtime's (the generator assumes a 64-bit process), or a field lies outside the record.</exception>
    public static CompiledRecordType Register<TInterface, TFactory>(int size, int alignment, FieldLayout[] fields)
        where TInterface : class
        where TFactory : struct, ICompiledRecordFactory
    {
        ArgumentNullException.ThrowIfNull(fields);
        var type = RecordTypes.RegisterCompiled(typeof(TInterface), size, alignment, fields,
            [&CreateChecked<TFactory>, &CreateUnchecked<TFactory>, &CreateCheckedView<TFactory>, &CreateUncheckedView<TFactory>, &CreateCheckedItem<TFactory>],
            [TFactory.CreateChecked().GetType(), TFactory.CreateUnchecked().GetType(), TFactory.CreateCheckedView().GetType(), TFactory.CreateUncheckedView().GetType(),
                TFactory.CreateCheckedItem().GetType()],
            Cache<TInterface>, &JsonContractOf<TFactory>);
        CompiledRecordSlot<TFactory>.Type = type; // for RecordRef<TFactory> and the held heap's New<TFactory>
        return type;
    }

    /// <summary>What a call <c>allocator.New&lt;T&gt;()</c> with a <see cref="NativeRecordAttribute"/> interface T becomes: the
    /// generator's interceptor calls this, which uses <paramref name="registration"/> and never emits code, so the call
    /// needs no dynamic code (no IL3050 or IL2026 at the call).</summary>
    /// <typeparam name="T">The record interface.</typeparam>
    /// <param name="allocator">The allocator the call was made on.</param>
    /// <param name="registration">T's registration (reading it registers T if the module initializer has not yet).</param>
    /// <returns>What <see cref="TypeAllocator.New{T}"/> returns.</returns>
    /// <exception cref="NullReferenceException"><paramref name="allocator"/> is null (as for the call it replaces).</exception>
    public static T New<T>(TypeAllocator allocator, CompiledRecordType registration) where T : class
        => allocator.NewRecord<T>(registration);

    /// <summary>What <c>allocator.NewArray&lt;T&gt;(count)</c> with a <see cref="NativeRecordAttribute"/> interface T becomes
    /// (see <see cref="New{T}"/>).</summary>
    /// <typeparam name="T">The record interface.</typeparam>
    /// <param name="allocator">The allocator the call was made on.</param>
    /// <param name="count">The number of records.</param>
    /// <param name="registration">T's registration.</param>
    /// <returns>What <see cref="TypeAllocator.NewArray{T}"/> returns.</returns>
    public static RecordArray<T> NewArray<T>(TypeAllocator allocator, int count, CompiledRecordType registration) where T : class
        => allocator.NewRecordArray<T>(count, registration);

    /// <summary>What <c>allocator.PreGenerate(typeof(A), ...)</c> with <see cref="NativeRecordAttribute"/> interfaces only
    /// becomes: their registrations already hold every class, so this checks the allocator and nothing more.</summary>
    /// <param name="allocator">The allocator the call was made on.</param>
    /// <param name="registrations">The registrations of the interfaces named (reading them registered them).</param>
    public static void PreGenerate(TypeAllocator allocator, params CompiledRecordType[] registrations)
    {
        ArgumentNullException.ThrowIfNull(allocator);
        ArgumentNullException.ThrowIfNull(registrations);
    }

    /// <summary>Where a record of <paramref name="size"/> bytes aligned to <paramref name="alignment"/> has its stamp, from its
    /// address: the generated checked class passes it to its accessors as a constant (a static readonly field).</summary>
    /// <param name="size">Record size in bytes, as the generator computed it.</param>
    /// <param name="alignment">Record alignment.</param>
    /// <returns>The offset of the stamp in the record's block (its last 4 bytes).</returns>
    public static int StampOffsetOf(int size, int alignment)
        => RecordType.StampOffsetOf((nuint)Math.Max(size, 1), (nuint)Math.Max(alignment, 16));

    /// <summary>The System.Text.Json contract of the generated record class <typeparamref name="TRecord"/>: its data written as
    /// its interface by <see cref="NativeRecordJsonConverter"/> (for the generated <see cref="ICompiledRecordFactory.JsonContract"/>).</summary>
    /// <typeparam name="TRecord">A generated record class.</typeparam>
    /// <param name="options">The options the contract is for.</param>
    /// <returns>A contract whose converter is <see cref="NativeRecordJsonConverter"/>.</returns>
    public static System.Text.Json.Serialization.Metadata.JsonTypeInfo JsonContract<TRecord>(System.Text.Json.JsonSerializerOptions options) where TRecord : NativeRecord
        => NativeRecordJson.ContractOf<TRecord>(options);

    private static System.Text.Json.Serialization.Metadata.JsonTypeInfo? JsonContractOf<TFactory>(Type generated, System.Text.Json.JsonSerializerOptions options)
        where TFactory : struct, ICompiledRecordFactory => TFactory.JsonContract(generated, options);

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

    /// <summary>One field of a compiled layout, as the generator computed it: the argument of <see cref="Register{TInterface, TFactory}"/>.</summary>
    /// <param name="name">The field's name (qualified by its interface when two properties of different types share it).</param>
    /// <param name="type">The property type.</param>
    /// <param name="offset">Byte offset in the record.</param>
    /// <param name="size">Bytes the generator assumed; checked against the runtime's size at registration.</param>
    /// <param name="alignment">Natural alignment the generator assumed.</param>
    /// <returns>The field, as <see cref="TypeLayout.Fields"/> will list it.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="name"/> or <paramref name="type"/> is null.</exception>
    public static FieldLayout Field(string name, Type type, int offset, int size, int alignment)
    {
        ArgumentNullException.ThrowIfNull(name);
        ArgumentNullException.ThrowIfNull(type);
        return new FieldLayout(name, type, offset, size, alignment, []);
    }
}
