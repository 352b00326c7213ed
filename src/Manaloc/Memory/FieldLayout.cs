using System.Reflection;

namespace Manaloc.Memory;

/// <summary>Where one property of a <see cref="TypeLayout"/> lives in the record.</summary>
/// <remarks>
/// A property declared with the same name and type by several interfaces of the record (a base and
/// the type itself, or two bases) shares one field, as one C# property would implement them all;
/// same name with different types gives separate fields named <c>Interface.Name</c>.
/// Thread safety: immutable.
/// </remarks>
public sealed class FieldLayout
{
    internal FieldLayout(string name, Type type, int offset, int size, int alignment, IReadOnlyList<PropertyInfo> properties)
    {
        Name = name;
        Type = type;
        Offset = offset;
        Size = size;
        Alignment = alignment;
        Properties = properties;
    }

    /// <summary>The property name (qualified by its interface when two properties of different types share it).</summary>
    public string Name { get; }
    /// <summary>The property type.</summary>
    public Type Type { get; }
    /// <summary>Byte offset from the start of the record.</summary>
    public int Offset { get; }
    /// <summary>Bytes the value occupies.</summary>
    public int Size { get; }
    /// <summary>Natural alignment of the value.</summary>
    public int Alignment { get; }

    /// <summary>The interface properties this field implements.</summary>
    internal IReadOnlyList<PropertyInfo> Properties { get; }

    /// <inheritdoc/>
    public override string ToString() => $"{Name}: {Type.Name} @ {Offset} ({Plural.Of(Size, "byte")}, align {Alignment})";
}
