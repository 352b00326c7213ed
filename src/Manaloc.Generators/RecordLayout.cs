using System;
using System.Collections.Generic;
using System.Linq;
using Microsoft.CodeAnalysis;

namespace Manaloc.Generators;

/// <summary>
/// Validates a [NativeRecord] interface and computes its layout with the rules of the run-time
/// <c>TypeLayout</c>, step for step: [RecordOffset] fields where they say, [OwnCacheLine] fields on a
/// line each, the rest largest alignment first (then largest size, stable) into the lowest free offset;
/// record alignment the largest field alignment (a cache line with [CacheLineAligned] or an own-line
/// field), size rounded up to it.
/// </summary>
internal static class RecordLayout
{
    private const int CacheLineSize = 64;
    private const int MaxRecordSize = int.MaxValue & ~(CacheLineSize - 1);
    private const string MemoryNamespace = "Manaloc.Memory.";

    /// <summary>The layout, or null with the reasons in <paramref name="diagnostics"/>.</summary>
    public static RecordModel? Compute(INamedTypeSymbol type, List<Diagnostic> diagnostics)
    {
        string typeName = type.ToDisplayString();
        var typeLocation = type.Locations.FirstOrDefault();
        for (INamedTypeSymbol? t = type; t is not null; t = t.ContainingType)
        {
            if (t.DeclaredAccessibility != Accessibility.Public)
            {
                diagnostics.Add(Diagnostic.Create(Diagnostics.NotPublic, typeLocation, typeName, SymbolEqualityComparer.Default.Equals(t, type) ? "it" : $"its containing type {t.Name}"));
                return null;
            }
            if (t.TypeParameters.Length > 0)
            {
                diagnostics.Add(Diagnostic.Create(Diagnostics.Generic, typeLocation, typeName, SymbolEqualityComparer.Default.Equals(t, type) ? "it" : $"its containing type {t.Name}"));
                return null;
            }
        }

        var interfaces = new List<INamedTypeSymbol> { type };
        interfaces.AddRange(type.AllInterfaces);
        var fields = new List<RecordField>();
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
                        if (CheckProperty(type, typeName, memberName, p, location, diagnostics) is { } field)
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
                        diagnostics.Add(Diagnostic.Create(Diagnostics.Event, location, typeName, memberName));
                        break;
                    case IMethodSymbol { MethodKind: MethodKind.PropertyGet or MethodKind.PropertySet or MethodKind.EventAdd or MethodKind.EventRemove or MethodKind.EventRaise or MethodKind.StaticConstructor }:
                        break;
                    case IMethodSymbol:
                        diagnostics.Add(Diagnostic.Create(Diagnostics.Method, location, typeName, memberName));
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
            diagnostics.Add(Diagnostic.Create(Diagnostics.GetOnly, p.Locations.FirstOrDefault() ?? typeLocation, typeName, $"{p.ContainingType.Name}.{p.Name}"));
        }
        if (diagnostics.Count > errorsBefore) return null;

        // Names: a field shared by name with another of a different type is qualified by its interface (metadata name).
        var named = new List<RecordField>(fields.Count);
        foreach (var f in fields)
        {
            bool ambiguous = fields.Count(g => g.Properties[0].Name == f.Properties[0].Name) > 1;
            var renamed = new RecordField(ambiguous ? $"{f.Properties[0].ContainingType.MetadataName}.{f.Name}" : f.Name, f.TypeName, f.Size, f.Alignment, f.Properties)
            {
                HasSetter = f.HasSetter,
            };
            if (!ReadLayoutAttributes(renamed, typeName, diagnostics)) return null;
            named.Add(renamed);
        }
        return Place(type, typeName, typeLocation, named, diagnostics);
    }

    private static RecordField? CheckProperty(INamedTypeSymbol type, string typeName, string memberName, IPropertySymbol p, Location? location, List<Diagnostic> diagnostics)
    {
        if (p.IsIndexer)
        {
            diagnostics.Add(Diagnostic.Create(Diagnostics.Indexer, location, typeName, memberName));
            return null;
        }
        if (p.DeclaredAccessibility != Accessibility.Public
            || p.GetMethod is { DeclaredAccessibility: not Accessibility.Public } || p.SetMethod is { DeclaredAccessibility: not Accessibility.Public })
        {
            diagnostics.Add(Diagnostic.Create(Diagnostics.NonPublicMember, location, typeName, memberName, "not public (or has a non-public accessor)"));
            return null;
        }
        if (p.IsStatic)
        {
            diagnostics.Add(Diagnostic.Create(Diagnostics.NotAbstract, location, typeName, memberName, "is static"));
            return null;
        }
        if (!p.IsAbstract || p.GetMethod is { IsAbstract: false } || p.SetMethod is { IsAbstract: false })
        {
            diagnostics.Add(Diagnostic.Create(Diagnostics.NotAbstract, location, typeName, memberName, "has a default implementation"));
            return null;
        }
        if (p.SetMethod is { IsInitOnly: true })
        {
            diagnostics.Add(Diagnostic.Create(Diagnostics.InitAccessor, location, typeName, memberName));
            return null;
        }
        if (p.ReturnsByRef || p.ReturnsByRefReadonly)
        {
            diagnostics.Add(Diagnostic.Create(Diagnostics.RefProperty, location, typeName, memberName));
            return null;
        }
        var value = ValueLayout.Of(p.Type);
        if (value.Error is not null)
        {
            var descriptor = value.UnknownLayout ? Diagnostics.UnknownLayout : Diagnostics.NotUnmanaged;
            string reason = value.UnknownLayout ? value.Error : $"which is {value.Error}";
            diagnostics.Add(Diagnostic.Create(descriptor, location, typeName, memberName, p.Type.ToDisplayString(), reason));
            return null;
        }
        return new RecordField(p.Name, p.Type.ToDisplayString(SymbolDisplayFormat.FullyQualifiedFormat), value.Size, value.Alignment, new List<IPropertySymbol> { p })
        {
            HasSetter = p.SetMethod is not null,
        };
    }

    private static bool ReadLayoutAttributes(RecordField field, string typeName, List<Diagnostic> diagnostics)
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
                        diagnostics.Add(Diagnostic.Create(Diagnostics.BadOffset, location, typeName, field.Name, "two declarations give different [RecordOffset] values"));
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
            diagnostics.Add(Diagnostic.Create(Diagnostics.BadOffset, field.Properties[0].Locations.FirstOrDefault(), typeName, field.Name, "[RecordOffset] and [OwnCacheLine] cannot be combined"));
            return false;
        }
        return true;
    }

    private static RecordModel? Place(INamedTypeSymbol type, string typeName, Location? typeLocation, List<RecordField> fields, List<Diagnostic> diagnostics)
    {
        bool alignRecord = type.GetAttributes().Any(a => a.AttributeClass is { } c && ValueLayout.FullName(c) == MemoryNamespace + "CacheLineAlignedAttribute");
        var occupied = new List<(long Start, long End)>();
        Location? At(RecordField f) => f.Properties[0].Locations.FirstOrDefault() ?? typeLocation;

        // 1. Fixed offsets.
        foreach (var field in fields.Where(f => f.FixedOffset is not null))
        {
            int at = field.FixedOffset!.Value;
            if (at < 0 || at % field.Alignment != 0)
            {
                diagnostics.Add(Diagnostic.Create(Diagnostics.BadOffset, At(field), typeName, field.Name, $"[RecordOffset({at})] is not a non-negative multiple of the type's natural alignment {field.Alignment}"));
                return null;
            }
            long end = (long)at + field.Size;
            if (end > MaxRecordSize)
            {
                diagnostics.Add(Diagnostic.Create(Diagnostics.TooLarge, At(field), typeName, field.Name, $"[RecordOffset({at})] puts its end at byte {end}, beyond the largest record size {MaxRecordSize}"));
                return null;
            }
            if (occupied.Any(o => at < o.End && o.Start < end))
            {
                diagnostics.Add(Diagnostic.Create(Diagnostics.BadOffset, At(field), typeName, field.Name, $"[RecordOffset({at})] overlaps another property"));
                return null;
            }
            field.Offset = at;
            occupied.Add((at, end));
        }
        // 2. Own cache lines.
        foreach (var field in fields.Where(f => f.FixedOffset is null && f.OwnLine))
        {
            long span = ValueLayout.AlignUp((long)Math.Max(field.Size, 1), CacheLineSize);
            long at = FirstFit(occupied, span, CacheLineSize);
            if (at + span > MaxRecordSize)
            {
                diagnostics.Add(Diagnostic.Create(Diagnostics.TooLarge, At(field), typeName, field.Name, $"its own cache line would end at byte {at + span}, beyond the largest record size {MaxRecordSize}"));
                return null;
            }
            field.Offset = (int)at;
            occupied.Add((at, at + span));
            alignRecord = true;
        }
        // 3. The rest, largest alignment first, then largest size (stable), lowest free offset.
        foreach (var field in fields.Where(f => f.FixedOffset is null && !f.OwnLine).OrderByDescending(f => f.Alignment).ThenByDescending(f => f.Size))
        {
            long at = FirstFit(occupied, field.Size, field.Alignment);
            if (at + field.Size > MaxRecordSize)
            {
                diagnostics.Add(Diagnostic.Create(Diagnostics.TooLarge, At(field), typeName, field.Name, $"placed after the other properties it would end at byte {at + field.Size}, beyond the largest record size {MaxRecordSize}"));
                return null;
            }
            field.Offset = (int)at;
            occupied.Add((at, at + field.Size));
        }

        int alignment = fields.Count == 0 ? 1 : fields.Max(f => f.Alignment);
        if (alignRecord) alignment = Math.Max(alignment, CacheLineSize);
        long last = occupied.Count == 0 ? 0 : occupied.Max(o => o.End);
        long size = ValueLayout.AlignUp(last, alignment);
        if (size > MaxRecordSize)
        {
            var lastField = fields.OrderByDescending(f => (long)f.Offset + f.Size).First();
            diagnostics.Add(Diagnostic.Create(Diagnostics.TooLarge, At(lastField), typeName, lastField.Name, $"the record rounded up to its alignment {alignment} would be {size} bytes, more than the limit of {MaxRecordSize}"));
            return null;
        }
        return new RecordModel(type, fields.OrderBy(f => f.Offset).ToList(), (int)size, alignment);
    }

    private static long FirstFit(List<(long Start, long End)> occupied, long size, int alignment)
    {
        long at = 0;
        while (true)
        {
            at = ValueLayout.AlignUp(at, alignment);
            long s = at, e = at + Math.Max(size, 1);
            long hit = -1;
            foreach (var o in occupied)
            {
                if (s < o.End && o.Start < e && o.End > hit) hit = o.End;
            }
            if (hit < 0) return at;
            at = hit;
        }
    }
}
