using System.ComponentModel;

namespace Manaloc.Memory.CompilerServices;

/// <summary>
/// A <see cref="NativeRecordAttribute"/> interface registered by its generated module initializer: what
/// <see cref="TypeAllocator.NewRef"/> and the class path of <see cref="TypeAllocator.New{T}"/> need, built
/// without reflection over the interface.
/// </summary>
/// <remarks>Immutable; shared by every allocator in the process. Obtained only from <see cref="CompiledRecords.Register{TInterface, TFactory}"/>
/// (each generated handle's <c>RecordType</c> property returns it). For generated code and <see cref="TypeAllocator.NewRef"/>.</remarks>
[EditorBrowsable(EditorBrowsableState.Never)]
public sealed unsafe class CompiledRecordType
{
    private readonly delegate*<Type, System.Text.Json.JsonSerializerOptions, System.Text.Json.Serialization.Metadata.JsonTypeInfo?> _jsonContract;

    internal CompiledRecordType(RecordType @checked, RecordType @unchecked, RecordType checkedView, RecordType uncheckedView, RecordType checkedItem,
        delegate*<Type, System.Text.Json.JsonSerializerOptions, System.Text.Json.Serialization.Metadata.JsonTypeInfo?> jsonContract)
    {
        _jsonContract = jsonContract;
        Checked = @checked;
        Unchecked = @unchecked;
        CheckedView = checkedView;
        UncheckedView = uncheckedView;
        CheckedItem = checkedItem;
    }

    internal RecordType Checked { get; }
    internal RecordType Unchecked { get; }
    internal RecordType CheckedView { get; }
    internal RecordType UncheckedView { get; }
    internal RecordType CheckedItem { get; }

    /// <summary>The class of <paramref name="mode"/>, for <paramref name="type"/>, which must be this record's interface.</summary>
    /// <exception cref="ArgumentException"><paramref name="type"/> is another interface (generated code passes the right one).</exception>
    internal RecordType Of(Type type, RecordMode mode)
    {
        if (type != Interface)
        {
            ThrowHelper.ThrowArgument(nameof(type), $"The compiled registration of {RecordTypes.TypeName(Interface)} does not implement {RecordTypes.TypeName(type)}.");
        }
        return mode switch
        {
            RecordMode.Checked => Checked,
            RecordMode.Unchecked => Unchecked,
            RecordMode.CheckedView => CheckedView,
            _ => UncheckedView,
        };
    }

    /// <summary>The System.Text.Json contract of <paramref name="generated"/>, one of this record's classes, made by its
    /// generated code (no dynamic code); null when the generated code made none.</summary>
    internal System.Text.Json.Serialization.Metadata.JsonTypeInfo? ContractOf(Type generated, System.Text.Json.JsonSerializerOptions options)
        => _jsonContract(generated, options);

    /// <summary>The record interface.</summary>
    public Type Interface => Checked.Interface;

    /// <summary>The record's layout (the one <see cref="TypeLayout.Of(Type)"/> computes for the interface).</summary>
    public TypeLayout Layout => Checked.Layout;

    /// <inheritdoc/>
    public override string ToString() => $"{RecordTypes.TypeName(Interface)} (compiled record, {Plural.Of(Layout.Size, "byte")})";
}
