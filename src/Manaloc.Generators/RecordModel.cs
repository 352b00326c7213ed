using System.Collections.Immutable;
using System.Linq;
using Manaloc.Memory;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Text;

namespace Manaloc.Generators;

// The generator's pipeline carries only these records: strings, numbers and equatable arrays, compared by value, so a step
// whose input did not change is cached and its outputs are not redone (System.Text.Json's generator does the same). No
// symbol, Compilation, Diagnostic or Location is kept: those compare by reference (or hold a whole compilation alive).

/// <summary>Where a diagnostic points: what <see cref="Location"/> holds, as values.</summary>
internal sealed record LocationInfo(string FilePath, TextSpan TextSpan, LinePositionSpan LineSpan)
{
    public Location ToLocation() => Location.Create(FilePath, TextSpan, LineSpan);

    public static LocationInfo? From(Location? location)
        => location is { SourceTree: { } tree } ? new LocationInfo(tree.FilePath, location.SourceSpan, location.GetLineSpan().Span) : null;
}

/// <summary>A diagnostic to report: its descriptor (equatable), where, and the message arguments as text.</summary>
internal sealed record DiagnosticInfo(DiagnosticDescriptor Descriptor, LocationInfo? Location, EquatableArray<string> Arguments)
{
    public static DiagnosticInfo Create(DiagnosticDescriptor descriptor, Location? location, params string[] arguments)
        => new(descriptor, LocationInfo.From(location), new EquatableArray<string>(arguments.ToImmutableArray()));

    public Diagnostic ToDiagnostic() => Diagnostic.Create(Descriptor, Location?.ToLocation(), Arguments.Items.Cast<object>().ToArray());
}

/// <summary>One interface property a field implements.</summary>
/// <param name="Name">The property's name.</param>
/// <param name="DeclaringType">The interface that declares it, <c>global::</c>-qualified.</param>
/// <param name="HasGetter">It declares a get accessor.</param>
/// <param name="HasSetter">It declares a set accessor.</param>
internal sealed record PropertyDeclaration(string Name, string DeclaringType, bool HasGetter, bool HasSetter);

/// <summary>One placed field of a record: its shape (the description the placement and TypeLayout share), offset, property
/// type and the properties it implements (a group of interface properties with the same name and type).</summary>
/// <param name="Shape">Name, size, alignment and layout attributes, as the placement reads them.</param>
/// <param name="Offset">Byte offset in the record.</param>
/// <param name="TypeName">The property type, fully qualified for generated code.</param>
/// <param name="Properties">The declarations, in the order the interfaces list them.</param>
/// <param name="HasSetter">Some declaration has a setter (the struct handle then gets one).</param>
internal sealed record RecordField(LayoutField Shape, int Offset, string TypeName, EquatableArray<PropertyDeclaration> Properties, bool HasSetter)
{
    public string Name => Shape.Name;
    public int Size => Shape.Size;
    public int Alignment => Shape.Alignment;
}

/// <summary>A record interface accepted by the generator: what the source needs of it, and its fields by offset.</summary>
/// <param name="InterfaceName">The interface, <c>global::</c>-qualified.</param>
/// <param name="DisplayName">The interface as C# shows it (namespace, containing types).</param>
/// <param name="Name">The interface's simple name (the generated classes are named after it).</param>
/// <param name="Namespace">Its namespace, empty for the global one.</param>
/// <param name="HandleName">The checked struct handle's name.</param>
internal sealed record RecordModel(string InterfaceName, string DisplayName, string Name, string Namespace, string HandleName, int Size, int Alignment,
    EquatableArray<RecordField> Fields);

/// <summary>What one [NativeRecord] interface produced: the model when accepted, else the diagnostics that refuse it.</summary>
/// <param name="HintName">The generated file's name.</param>
/// <param name="HandleKeys">The namespace-qualified names of the two struct handles (the checked and the unchecked one).</param>
/// <param name="Location">The interface's declaration, where a name clash is reported.</param>
internal sealed record RecordResult(string HintName, RecordModel? Model, EquatableArray<DiagnosticInfo> Diagnostics, EquatableArray<string> HandleKeys,
    string DisplayName, LocationInfo? Location);

/// <summary>A record refused because another one took its handle's name, with the diagnostic that says so.</summary>
internal sealed record Refusal(string HintName, DiagnosticInfo Diagnostic);
