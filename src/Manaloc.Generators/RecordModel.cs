using System.Collections.Generic;
using Microsoft.CodeAnalysis;

namespace Manaloc.Generators;

/// <summary>One field of a record: a group of interface properties with the same name and type (as the run-time layout groups them).</summary>
internal sealed class RecordField
{
    public RecordField(string name, string typeName, int size, int alignment, List<IPropertySymbol> properties)
    {
        Name = name;
        TypeName = typeName;
        Size = size;
        Alignment = alignment;
        Properties = properties;
    }

    /// <summary>The property name, qualified by its interface's metadata name when two properties of different types share it.</summary>
    public string Name { get; }
    /// <summary>The property type, fully qualified for generated code.</summary>
    public string TypeName { get; }
    public int Size { get; }
    public int Alignment { get; }
    public int Offset { get; set; }
    public int? FixedOffset { get; set; }
    public bool OwnLine { get; set; }
    public List<IPropertySymbol> Properties { get; }
    /// <summary>Some declaration has a setter (the struct handle then gets one).</summary>
    public bool HasSetter { get; set; }
}

/// <summary>A record interface accepted by the generator: its fields with offsets, size and alignment.</summary>
internal sealed class RecordModel
{
    public RecordModel(INamedTypeSymbol type, List<RecordField> fields, int size, int alignment)
    {
        Type = type;
        Fields = fields;
        Size = size;
        Alignment = alignment;
    }

    public INamedTypeSymbol Type { get; }
    public List<RecordField> Fields { get; }
    public int Size { get; }
    public int Alignment { get; }
}
