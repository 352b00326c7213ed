using System.Diagnostics.CodeAnalysis;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Manaloc.Memory;

public sealed partial class TypeLayout
{
    private const BindingFlags DeclaredMembers = BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Instance | BindingFlags.Static | BindingFlags.DeclaredOnly;

    [RequiresUnreferencedCode("Reads the interface's properties and their types' fields through reflection.")]
    private static TypeLayout Compute(Type type)
    {
        ValidateType(type);
        var fields = CollectFields(type);
        bool alignRecord = type.IsDefined(typeof(CacheLineAlignedAttribute), inherit: false);
        // Offsets and ends are computed in long: a [RecordOffset] near int.MaxValue must be rejected, not wrap.
        var occupied = new OccupiedRanges();
        var placed = new List<FieldLayout>(fields.Count);

        // 1. Fixed offsets.
        foreach (var (field, offset, _) in fields.Where(f => f.Offset is not null))
        {
            int at = offset!.Value;
            if (at < 0 || at % field.Alignment != 0)
            {
                throw Invalid(type, field.Name, $"[RecordOffset({at})] is not a non-negative multiple of the type's natural alignment {field.Alignment}");
            }
            long end = (long)at + field.Size;
            CheckFits(type, field.Name, end, $"[RecordOffset({at})] puts its end at byte {end}");
            if (occupied.Overlaps(at, end))
            {
                throw Invalid(type, field.Name, $"[RecordOffset({at})] overlaps another property");
            }
            field.Offset = at;
            occupied.Add(at, end);
            placed.Add(field);
        }
        // 2. Own cache lines.
        foreach (var (field, _, _) in fields.Where(f => f.Offset is null && f.OwnLine))
        {
            long span = AlignUp(Math.Max(field.Size, 1), CacheLineSize);
            long at = occupied.FirstFit(span, CacheLineSize);
            CheckFits(type, field.Name, at + span, $"its own cache line would end at byte {at + span}");
            field.Offset = (int)at;
            occupied.Add(at, at + span);
            placed.Add(field);
            alignRecord = true;
        }
        // 3. The rest, largest alignment first (stable), lowest free offset.
        foreach (var (field, _, _) in fields.Where(f => f.Offset is null && !f.OwnLine)
                     .OrderByDescending(f => f.Field.Alignment).ThenByDescending(f => f.Field.Size))
        {
            long at = occupied.FirstFit(field.Size, field.Alignment);
            CheckFits(type, field.Name, at + field.Size, $"placed after the other properties it would end at byte {at + field.Size}");
            field.Offset = (int)at;
            occupied.Add(at, at + field.Size);
            placed.Add(field);
        }

        int alignment = placed.Count == 0 ? 1 : placed.Max(f => f.Alignment);
        if (alignRecord) alignment = Math.Max(alignment, CacheLineSize);
        long last = occupied.End;
        long size = AlignUp(last, alignment);
        if (size > MaxRecordSize)
        {
            var lastField = placed.MaxBy(f => (long)f.Offset + f.Size)!;
            throw Invalid(type, lastField.Name, $"the record rounded up to its alignment {alignment} would be {size} bytes, more than the limit of {MaxRecordSize}");
        }
        return new TypeLayout(type, (int)size, alignment, placed.OrderBy(f => f.Offset).ToArray());
    }

    /// <summary>Largest record size in bytes (int.MaxValue rounded down to a cache line): sizes and offsets stay valid ints.</summary>
    internal const int MaxRecordSize = int.MaxValue & ~(CacheLineSize - 1);

    private static void CheckFits(Type type, string member, long end, string what)
    {
        if (end > MaxRecordSize) throw Invalid(type, member, $"{what}, beyond the largest record size {MaxRecordSize}");
    }

    private static long AlignUp(long value, int alignment) => (value + alignment - 1) / alignment * alignment;

    private static void ValidateType(Type type)
    {
        if (!type.IsInterface)
        {
            throw Invalid(type, null, type.IsValueType ? "it is a struct; TypeAllocator implements interfaces" : "it is a class; TypeAllocator implements interfaces");
        }
        if (type.ContainsGenericParameters)
        {
            throw Invalid(type, null, "it is an open generic interface; close it (e.g. IBox<int>)");
        }
        if (NotVisible(type) is { } hidden)
        {
            throw Invalid(type, null, hidden == type
                ? "it is not public; the implementation is generated in another assembly, which must see it"
                : $"{RecordTypes.TypeName(hidden)} is not public (the implementation is generated in another assembly, which must see every type the interface names)");
        }
    }

    /// <summary>The first type in <paramref name="t"/>'s name (itself, a declaring type, a generic argument, an element type) that another assembly cannot see, or null.</summary>
    private static Type? NotVisible(Type t)
    {
        if (t.HasElementType) return NotVisible(t.GetElementType()!);
        if (t.IsGenericParameter) return null;
        for (Type? level = t; level is not null; level = level.DeclaringType)
        {
            if (!(level.IsPublic || level.IsNestedPublic)) return level;
        }
        if (t.IsGenericType)
        {
            foreach (var argument in t.GetGenericArguments())
            {
                if (NotVisible(argument) is { } hidden) return hidden;
            }
        }
        return null;
    }

    private record struct Candidate(FieldLayout Field, int? Offset, bool OwnLine);

    [RequiresUnreferencedCode("Reads the interface's properties and their types' fields through reflection.")]
    private static List<Candidate> CollectFields(Type type)
    {
        var interfaces = new List<Type> { type };
        interfaces.AddRange(type.GetInterfaces());
        var groups = new List<(string Name, Type PropertyType, List<PropertyInfo> Properties)>();
        var groupOf = new Dictionary<(string, Type), int>();
        var namesSeen = new Dictionary<string, int>(StringComparer.Ordinal);
        foreach (var iface in interfaces)
        {
            string ifaceName = RecordTypes.TypeName(iface);
            var accessors = new HashSet<MethodInfo>();
            // Events first: their add/remove methods would otherwise be refused as methods, with a message that misleads.
            foreach (var e in iface.GetEvents(DeclaredMembers))
            {
                throw Invalid(type, $"{ifaceName}.{e.Name}", "events are not supported, only properties");
            }
            foreach (var p in iface.GetProperties(DeclaredMembers))
            {
                ValidateProperty(type, iface, p);
                if (p.GetMethod is not null) accessors.Add(p.GetMethod);
                if (p.SetMethod is not null) accessors.Add(p.SetMethod);
                if (groupOf.TryGetValue((p.Name, p.PropertyType), out int group))
                {
                    groups[group].Properties.Add(p);
                }
                else
                {
                    groupOf[(p.Name, p.PropertyType)] = groups.Count;
                    groups.Add((p.Name, p.PropertyType, [p]));
                    namesSeen[p.Name] = namesSeen.GetValueOrDefault(p.Name) + 1;
                }
            }
            foreach (var m in iface.GetMethods(DeclaredMembers))
            {
                if (!accessors.Contains(m)) throw Invalid(type, $"{ifaceName}.{m.Name}", "methods are not supported, only properties");
            }
        }

        var result = new List<Candidate>(groups.Count);
        foreach (var (name, propertyType, properties) in groups)
        {
            // A field no declaration can write would read zero forever: refused, as the generator refuses it (MNL015). A get-only
            // property is fine when another declaration of the same field (a derived interface's `new` property) has the setter.
            if (properties.TrueForAll(p => p.SetMethod is null))
            {
                throw Invalid(type, $"{RecordTypes.TypeName(properties[0].DeclaringType!)}.{name}",
                    "it has only a getter, so nothing could ever write it and it would always read zero; add a set accessor");
            }
            bool ambiguous = namesSeen[name] > 1;
            string fieldName = ambiguous ? $"{RecordTypes.TypeName(properties[0].DeclaringType!)}.{name}" : name;
            int size = RuntimeHelpers.SizeOf(propertyType.TypeHandle);
            int alignment = AlignmentOf(propertyType);
            int? offset = null;
            bool ownLine = false;
            foreach (var p in properties)
            {
                var fixedAt = p.GetCustomAttribute<RecordOffsetAttribute>();
                if (fixedAt is not null)
                {
                    if (offset is not null && offset != fixedAt.Offset) throw Invalid(type, fieldName, "two declarations give different [RecordOffset] values");
                    offset = fixedAt.Offset;
                }
                ownLine |= p.IsDefined(typeof(OwnCacheLineAttribute), inherit: false);
            }
            if (offset is not null && ownLine) throw Invalid(type, fieldName, "[RecordOffset] and [OwnCacheLine] cannot be combined");
            result.Add(new Candidate(new FieldLayout(fieldName, propertyType, 0, size, alignment, properties), offset, ownLine));
        }
        return result;
    }

    [RequiresUnreferencedCode("Reads the property type's fields through reflection.")]
    private static void ValidateProperty(Type type, Type iface, PropertyInfo p)
    {
        string member = $"{RecordTypes.TypeName(iface)}.{p.Name}";
        if (p.GetIndexParameters().Length > 0) throw Invalid(type, member, "indexers are not supported");
        var accessor = p.GetMethod ?? p.SetMethod!;
        if (accessor.IsStatic) throw Invalid(type, member, "static properties are not supported");
        if (p.GetMethod is { IsPublic: false } || p.SetMethod is { IsPublic: false })
        {
            throw Invalid(type, member, "an accessor is not public; the implementation is generated in another assembly, which can implement only public members");
        }
        if (p.SetMethod is { } setter && setter.ReturnParameter.GetRequiredCustomModifiers().Contains(typeof(IsExternalInit)))
        {
            throw Invalid(type, member, "init accessors are not supported (a record's properties are set after New); use set, or get only");
        }
        if (!accessor.IsAbstract || (p.GetMethod is { IsAbstract: false }) || (p.SetMethod is { IsAbstract: false }))
        {
            throw Invalid(type, member, "the property has a default implementation");
        }
        Type t = p.PropertyType;
        if (t.IsByRef) throw Invalid(type, member, "by-reference (ref) properties are not supported");
        if (t.IsPointer || t.IsFunctionPointer) throw Invalid(type, member, $"pointer type {RecordTypes.TypeName(t)} is not supported; use nint");
        if (!t.IsValueType) throw Invalid(type, member, $"its type {RecordTypes.TypeName(t)} is a reference type; native records hold only unmanaged values");
        if (t.IsByRefLike) throw Invalid(type, member, $"its type {RecordTypes.TypeName(t)} is a ref struct");
        if (t.ContainsGenericParameters) throw Invalid(type, member, $"its type {RecordTypes.TypeName(t)} is an open generic type");
        if (NotVisible(t) is { } hidden) throw Invalid(type, member, $"its type {RecordTypes.TypeName(t)} names {RecordTypes.TypeName(hidden)}, which is not public (the implementation is generated in another assembly, which must see it)");
        string? reference = FindReference(t);
        if (reference is not null) throw Invalid(type, member, $"its type {RecordTypes.TypeName(t)} contains a reference ({reference})");
    }

    /// <summary>Nesting depth the field walk follows; deeper, it cannot tell and answers "reference" (never accepts unseen fields).</summary>
    private const int MaxWalkDepth = 32;

    /// <summary>The path of a reference inside value type <paramref name="t"/>, or null when it holds none.</summary>
    /// <remarks>The yes/no comes from the runtime (<see cref="RuntimeHelpers.IsReferenceOrContainsReferences{T}"/>,
    /// exact at any depth) when dynamic code is available; the field walk only names the member. Without
    /// dynamic code the walk decides, and a struct nested deeper than it follows is rejected.</remarks>
    [RequiresUnreferencedCode("Reads the type's fields through reflection.")]
    [UnconditionalSuppressMessage("AOT", "IL3050", Justification = "Guarded by RuntimeFeature.IsDynamicCodeSupported; without it the conservative walk decides.")]
    private static string? FindReference(Type t)
    {
        if (RuntimeFeature.IsDynamicCodeSupported)
        {
            var check = typeof(RuntimeHelpers).GetMethod(nameof(RuntimeHelpers.IsReferenceOrContainsReferences), Type.EmptyTypes)!;
            if (!(bool)check.MakeGenericMethod(t).Invoke(null, null)!) return null;
            return WalkForReference(t, RecordTypes.TypeName(t), 0) ?? $"{RecordTypes.TypeName(t)}: reported by the runtime";
        }
        return WalkForReference(t, RecordTypes.TypeName(t), 0);
    }

    [RequiresUnreferencedCode("Reads the type's fields through reflection.")]
    private static string? WalkForReference(Type t, string path, int depth)
    {
        if (t.IsPrimitive || t.IsEnum || t.IsPointer || t.IsFunctionPointer) return null;
        if (!t.IsValueType) return path;
        if (depth > MaxWalkDepth) return $"{path}: nested deeper than {MaxWalkDepth} levels, not verified";
        foreach (var f in t.GetFields(BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic))
        {
            var hit = WalkForReference(f.FieldType, $"{path}.{f.Name}", depth + 1);
            if (hit is not null) return hit;
        }
        return null;
    }

    [RequiresUnreferencedCode("Reads the type's fields through reflection.")]
    internal static int AlignmentOf(Type t)
    {
        if (t.IsEnum) t = Enum.GetUnderlyingType(t);
        if (t == typeof(Int128) || t == typeof(UInt128)) return 16;
        if (t.IsPrimitive || t.IsPointer) return Math.Min(8, RuntimeHelpers.SizeOf(t.TypeHandle));
        int alignment = 1;
        foreach (var f in t.GetFields(BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic))
        {
            alignment = Math.Max(alignment, AlignmentOf(f.FieldType));
        }
        if (t.StructLayoutAttribute is { Pack: > 0 } layout && layout.Value != LayoutKind.Auto)
        {
            alignment = Math.Min(alignment, layout.Pack);
        }
        return alignment;
    }

    private static ArgumentException Invalid(Type type, string? member, string reason)
        => new(member is null
            ? $"Type '{RecordTypes.TypeName(type, withNamespace: true)}' cannot be allocated by TypeAllocator: {reason}."
            : $"Type '{RecordTypes.TypeName(type, withNamespace: true)}' cannot be allocated by TypeAllocator: member '{member}': {reason}.");
}
