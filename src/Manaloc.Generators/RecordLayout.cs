using System;
using System.Collections.Generic;
using System.Linq;
using Manaloc.Memory;
using Microsoft.CodeAnalysis;

namespace Manaloc.Generators;

/// <summary>
/// Validates a [NativeRecord] interface, groups its properties into fields as the run-time <c>TypeLayout</c> does, and
/// places them with <see cref="RecordPlacement"/>, the placement TypeLayout runs (one source file, compiled into both).
/// </summary>
internal static class RecordLayout
{
    private const string MemoryNamespace = "Manaloc.Memory.";

    /// <summary>A field while the interface is read: its properties as symbols, which never leave this class.</summary>
    private sealed class FieldGroup
    {
        public FieldGroup(string name, string typeName, int size, int alignment, IPropertySymbol property)
        {
            Name = name;
            TypeName = typeName;
            Size = size;
            Alignment = alignment;
            Properties.Add(property);
            HasSetter = property.SetMethod is not null;
        }

        public string Name { get; set; }
        public string TypeName { get; }
        public int Size { get; }
        public int Alignment { get; }
        public int? FixedOffset { get; set; }
        public bool OwnLine { get; set; }
        public List<IPropertySymbol> Properties { get; } = new();
        public bool HasSetter { get; set; }
        public LayoutField Shape => new(Name, Size, Alignment, FixedOffset, OwnLine);
    }

    /// <summary>The layout, or null with the reasons in <paramref name="diagnostics"/>.</summary>
    public static RecordModel? Compute(INamedTypeSymbol type, string handleName, List<DiagnosticInfo> diagnostics)
    {
        string typeName = type.ToDisplayString();
        var typeLocation = type.Locations.FirstOrDefault();
        for (INamedTypeSymbol? t = type; t is not null; t = t.ContainingType)
        {
            if (t.DeclaredAccessibility != Accessibility.Public)
            {
                diagnostics.Add(DiagnosticInfo.Create(Diagnostics.NotPublic, typeLocation, typeName, SymbolEqualityComparer.Default.Equals(t, type) ? "it" : $"its containing type {t.Name}"));
                return null;
            }
            if (t.TypeParameters.Length > 0)
            {
                diagnostics.Add(DiagnosticInfo.Create(Diagnostics.Generic, typeLocation, typeName, SymbolEqualityComparer.Default.Equals(t, type) ? "it" : $"its containing type {t.Name}"));
                return null;
            }
        }

        var interfaces = new List<INamedTypeSymbol> { type };
        interfaces.AddRange(type.AllInterfaces);
        var fields = new List<FieldGroup>();
        int errorsBefore = diagnostics.Count;
        foreach (var iface in interfaces)
        {
            foreach (var member in iface.GetMembers())
            {
                var location = member.Locations.FirstOrDefault() ?? typeLocation;
                string memberName = $"{iface.Name}.{member.Name}";
                switch (member)
                {
                    case IPropertySymbol p:
                        if (CheckProperty(typeName, memberName, p, location, diagnostics) is { } field)
                        {
                            var group = fields.FirstOrDefault(g => g.Properties[0].Name == p.Name && SymbolEqualityComparer.Default.Equals(g.Properties[0].Type, p.Type));
                            if (group is not null)
                            {
                                group.Properties.Add(p);
                                group.HasSetter |= p.SetMethod is not null;
                            }
                            else
                            {
                                fields.Add(field);
                            }
                        }
                        break;
                    case IEventSymbol:
                        diagnostics.Add(DiagnosticInfo.Create(Diagnostics.Event, location, typeName, memberName));
                        break;
                    case IMethodSymbol { MethodKind: MethodKind.PropertyGet or MethodKind.PropertySet or MethodKind.EventAdd or MethodKind.EventRemove or MethodKind.EventRaise or MethodKind.StaticConstructor }:
                        break;
                    case IMethodSymbol:
                        diagnostics.Add(DiagnosticInfo.Create(Diagnostics.Method, location, typeName, memberName));
                        break;
                    default:
                        break; // nested types and static fields hold no record data (the run-time path ignores them too)
                }
            }
        }
        // A field no declaration can write (get-only everywhere) would read zero forever. A get-only property is fine when
        // another declaration of the same field (a derived interface's `new` property) has the setter.
        foreach (var field in fields.Where(f => !f.HasSetter))
        {
            var p = field.Properties[0];
            diagnostics.Add(DiagnosticInfo.Create(Diagnostics.GetOnly, p.Locations.FirstOrDefault() ?? typeLocation, typeName, $"{p.ContainingType.Name}.{p.Name}"));
        }
        if (diagnostics.Count > errorsBefore) return null;

        // Names: a field shared by name with another of a different type is qualified by its interface (metadata name).
        foreach (var f in fields)
        {
            if (fields.Count(g => g.Properties[0].Name == f.Properties[0].Name) > 1) f.Name = $"{f.Properties[0].ContainingType.MetadataName}.{f.Name}";
        }
        foreach (var f in fields)
        {
            if (!ReadLayoutAttributes(f, typeName, diagnostics)) return null;
        }
        return Place(type, handleName, typeLocation, fields, diagnostics);
    }

    private static FieldGroup? CheckProperty(string typeName, string memberName, IPropertySymbol p, Location? location, List<DiagnosticInfo> diagnostics)
    {
        if (p.IsIndexer)
        {
            diagnostics.Add(DiagnosticInfo.Create(Diagnostics.Indexer, location, typeName, memberName));
            return null;
        }
        if (p.DeclaredAccessibility != Accessibility.Public
            || p.GetMethod is { DeclaredAccessibility: not Accessibility.Public } || p.SetMethod is { DeclaredAccessibility: not Accessibility.Public })
        {
            diagnostics.Add(DiagnosticInfo.Create(Diagnostics.NonPublicMember, location, typeName, memberName, "not public (or has a non-public accessor)"));
            return null;
        }
        if (p.IsStatic)
        {
            diagnostics.Add(DiagnosticInfo.Create(Diagnostics.NotAbstract, location, typeName, memberName, "is static"));
            return null;
        }
        if (!p.IsAbstract || p.GetMethod is { IsAbstract: false } || p.SetMethod is { IsAbstract: false })
        {
            diagnostics.Add(DiagnosticInfo.Create(Diagnostics.NotAbstract, location, typeName, memberName, "has a default implementation"));
            return null;
        }
        if (p.SetMethod is { IsInitOnly: true })
        {
            diagnostics.Add(DiagnosticInfo.Create(Diagnostics.InitAccessor, location, typeName, memberName));
            return null;
        }
        if (p.ReturnsByRef || p.ReturnsByRefReadonly)
        {
            diagnostics.Add(DiagnosticInfo.Create(Diagnostics.RefProperty, location, typeName, memberName));
            return null;
        }
        var value = ValueLayout.Of(p.Type);
        if (value.Error is not null)
        {
            var descriptor = value.UnknownLayout ? Diagnostics.UnknownLayout : Diagnostics.NotUnmanaged;
            string reason = value.UnknownLayout ? value.Error : $"which is {value.Error}";
            diagnostics.Add(DiagnosticInfo.Create(descriptor, location, typeName, memberName, p.Type.ToDisplayString(), reason));
            return null;
        }
        return new FieldGroup(p.Name, p.Type.ToDisplayString(SymbolDisplayFormat.FullyQualifiedFormat), value.Size, value.Alignment, p);
    }

    private static bool ReadLayoutAttributes(FieldGroup field, string typeName, List<DiagnosticInfo> diagnostics)
    {
        foreach (var p in field.Properties)
        {
            var location = p.Locations.FirstOrDefault();
            foreach (var attribute in p.GetAttributes())
            {
                string? name = attribute.AttributeClass is { } c ? ValueLayout.FullName(c) : null;
                if (name == MemoryNamespace + "RecordOffsetAttribute" && attribute.ConstructorArguments.Length == 1 && attribute.ConstructorArguments[0].Value is int at)
                {
                    if (field.FixedOffset is { } other && other != at)
                    {
                        diagnostics.Add(DiagnosticInfo.Create(Diagnostics.BadOffset, location, typeName, field.Name, "two declarations give different [RecordOffset] values"));
                        return false;
                    }
                    field.FixedOffset = at;
                }
                else if (name == MemoryNamespace + "OwnCacheLineAttribute")
                {
                    field.OwnLine = true;
                }
            }
        }
        if (field.FixedOffset is not null && field.OwnLine)
        {
            diagnostics.Add(DiagnosticInfo.Create(Diagnostics.BadOffset, field.Properties[0].Locations.FirstOrDefault(), typeName, field.Name, "[RecordOffset] and [OwnCacheLine] cannot be combined"));
            return false;
        }
        return true;
    }

    private static RecordModel? Place(INamedTypeSymbol type, string handleName, Location? typeLocation, List<FieldGroup> fields, List<DiagnosticInfo> diagnostics)
    {
        bool cacheLineAligned = type.GetAttributes().Any(a => a.AttributeClass is { } c && ValueLayout.FullName(c) == MemoryNamespace + "CacheLineAlignedAttribute");
        var placement = RecordPlacement.Place(fields.Select(f => f.Shape).ToList(), cacheLineAligned);
        if (placement.Reason is { } reason)
        {
            var field = fields[placement.Field];
            var descriptor = placement.Error == PlacementError.BadOffset ? Diagnostics.BadOffset : Diagnostics.TooLarge;
            diagnostics.Add(DiagnosticInfo.Create(descriptor, field.Properties[0].Locations.FirstOrDefault() ?? typeLocation, type.ToDisplayString(), field.Name, reason));
            return null;
        }
        var placed = fields.Select((f, i) => new RecordField(f.Shape, placement.Offsets[i], f.TypeName,
                f.Properties.Select(p => new PropertyDeclaration(p.Name, p.ContainingType.ToDisplayString(SymbolDisplayFormat.FullyQualifiedFormat),
                    p.GetMethod is not null, p.SetMethod is not null)).ToEquatableArray(), f.HasSetter))
            .OrderBy(f => f.Offset)
            .ToEquatableArray();
        return new RecordModel(type.ToDisplayString(SymbolDisplayFormat.FullyQualifiedFormat), type.ToDisplayString(), type.Name,
            type.ContainingNamespace is { IsGlobalNamespace: false } n ? n.ToDisplayString() : "", handleName, placement.Size, placement.Alignment, placed);
    }
}
