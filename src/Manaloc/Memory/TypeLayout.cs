using System.Collections.Concurrent;
using System.Diagnostics.CodeAnalysis;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;

namespace Manaloc.Memory;

/// <summary>
/// The native layout <see cref="TypeAllocator"/> gives an interface: each property's offset, size and
/// alignment, the padding, and the record's size and alignment.
/// </summary>
/// <remarks>
/// <para>Rules: every field is naturally aligned; fields with <see cref="RecordOffsetAttribute"/> go
/// where they say; fields with <see cref="OwnCacheLineAttribute"/> get a cache line each; the rest are
/// placed largest alignment first into the lowest free offset, which leaves no padding between them
/// (every .NET value type's size is a multiple of its alignment). The record's alignment is its largest
/// field alignment (a cache line with <see cref="CacheLineAlignedAttribute"/> or an own-line field) and
/// its size is rounded up to it, so records in an array stay aligned.</para>
/// <para>For example, an interface of an int, a long, a double and a byte, in that order, is laid out
/// long @0, double @8, int @16, byte @20 in a 24-byte, 8-aligned record (summing the sizes in declaration
/// order would give 21 bytes with the long and the double misaligned).</para>
/// <para>Thread safety: immutable; <see cref="Of(Type)"/> is safe from any thread and computes each layout once.</para>
/// </remarks>
public sealed class TypeLayout
{
    /// <summary>Cache line size assumed by the layout attributes (64 bytes: x64 and most ARM64 cores).</summary>
    public const int CacheLineSize = RecordPlacement.CacheLineSize;

    private static readonly ConcurrentDictionary<Type, TypeLayout> s_cache = new();

    private TypeLayout(Type type, int size, int alignment, IReadOnlyList<FieldLayout> fields)
    {
        Type = type;
        Size = size;
        Alignment = alignment;
        Fields = fields;
    }

    /// <summary>The interface laid out.</summary>
    public Type Type { get; }
    /// <summary>Bytes of one record, a multiple of <see cref="Alignment"/>.</summary>
    public int Size { get; }
    /// <summary>Alignment of the record.</summary>
    public int Alignment { get; }
    /// <summary>Fields by increasing offset.</summary>
    public IReadOnlyList<FieldLayout> Fields { get; }
    /// <summary>Bytes of the record not occupied by any field (between fields and at the end).</summary>
    public int Padding => Size - Fields.Sum(f => f.Size);

    /// <summary>The layout of interface <paramref name="type"/>.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="type"/> is null.</exception>
    /// <exception cref="ArgumentException">The type cannot be a record; the message names the type, the member and the reason.</exception>
    [RequiresUnreferencedCode("Reads the interface's properties and their types' fields through reflection.")]
    public static TypeLayout Of(Type type)
    {
        ArgumentNullException.ThrowIfNull(type);
        if (s_cache.TryGetValue(type, out var layout)) return layout;
        layout = Compute(type);
        return s_cache.GetOrAdd(type, layout);
    }

    /// <summary>The layout of interface <typeparamref name="T"/>.</summary>
    /// <exception cref="ArgumentException">The type cannot be a record.</exception>
    [RequiresUnreferencedCode("Reads the interface's properties and their types' fields through reflection.")]
    public static TypeLayout Of<T>() where T : class => Of(typeof(T));

    /// <summary>One line per field, then size, alignment and padding.</summary>
    public override string ToString()
    {
        var sb = new StringBuilder();
        sb.Append(Type.Name).Append(": ").Append(Size).Append(" bytes, align ").Append(Alignment).Append(", padding ").Append(Padding).AppendLine();
        foreach (var f in Fields) sb.Append("  ").AppendLine(f.ToString());
        return sb.ToString();
    }

    private const BindingFlags DeclaredMembers = BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Instance | BindingFlags.Static | BindingFlags.DeclaredOnly;

    [RequiresUnreferencedCode("Reads the interface's properties and their types' fields through reflection.")]
    private static TypeLayout Compute(Type type)
    {
        ValidateType(type);
        var (shapes, types, properties) = CollectFields(type);
        // The placement the source generator runs too (RecordPlacement.cs is compiled into both).
        var placement = RecordPlacement.Place(shapes, type.IsDefined(typeof(CacheLineAlignedAttribute), inherit: false));
        if (placement.Reason is { } reason) throw Invalid(type, shapes[placement.Field].Name, reason);
        var fields = new FieldLayout[shapes.Count];
        for (int i = 0; i < fields.Length; i++)
        {
            fields[i] = new FieldLayout(shapes[i].Name, types[i], placement.Offsets[i], shapes[i].Size, shapes[i].Alignment, properties[i]);
        }
        return new TypeLayout(type, placement.Size, placement.Alignment, fields.OrderBy(f => f.Offset).ToArray());
    }

    /// <summary>Largest record size in bytes (int.MaxValue rounded down to a cache line): sizes and offsets stay valid ints.</summary>
    internal const int MaxRecordSize = RecordPlacement.MaxRecordSize;

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

    /// <summary>The record's fields, unplaced: for each, its shape, its property type and the properties it implements.</summary>
    [RequiresUnreferencedCode("Reads the interface's properties and their types' fields through reflection.")]
    private static (List<LayoutField> Shapes, List<Type> Types, List<PropertyInfo[]> Properties) CollectFields(Type type)
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

        var shapes = new List<LayoutField>(groups.Count);
        var types = new List<Type>(groups.Count);
        var implemented = new List<PropertyInfo[]>(groups.Count);
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
            shapes.Add(new LayoutField(fieldName, size, alignment, offset, ownLine));
            types.Add(propertyType);
            implemented.Add([.. properties]);
        }
        return (shapes, types, implemented);
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

    /// <summary>
    /// The layout the source generator computed for a <see cref="NativeRecordAttribute"/> interface, checked against
    /// this runtime without reflection over the interface: each field's size must equal the runtime's, lie inside the
    /// record at an offset that is a multiple of its alignment, and overlap no other field.
    /// </summary>
    /// <exception cref="InvalidOperationException">The compiled layout does not hold here; the message names the field.</exception>
    internal static TypeLayout FromCompiled(Type type, int size, int alignment, FieldLayout[] compiled)
    {
        if (size < 0 || size > MaxRecordSize || alignment <= 0 || (alignment & (alignment - 1)) != 0 || size % alignment != 0)
        {
            throw Mismatch(type, null, $"size {size} and alignment {alignment} are not a valid record shape");
        }
        var fields = new FieldLayout[compiled.Length];
        for (int i = 0; i < compiled.Length; i++)
        {
            var f = compiled[i];
            ArgumentNullException.ThrowIfNull(f);
            int runtimeSize = RuntimeHelpers.SizeOf(f.Type.TypeHandle);
            if (runtimeSize != f.Size)
            {
                throw Mismatch(type, f.Name, $"the generator assumed {Plural.Of(f.Size, "byte")} for {f.Type.Name}, this runtime has {runtimeSize} (compile-time layouts assume a 64-bit process)");
            }
            if (f.Offset < 0 || f.Alignment <= 0 || f.Offset % f.Alignment != 0 || (long)f.Offset + f.Size > size || f.Alignment > alignment)
            {
                throw Mismatch(type, f.Name, $"offset {f.Offset} (size {f.Size}, alignment {f.Alignment}) does not fit a {size}-byte record aligned to {alignment}");
            }
            fields[i] = f;
        }
        Array.Sort(fields, static (a, b) => a.Offset.CompareTo(b.Offset));
        for (int i = 1; i < fields.Length; i++)
        {
            if ((long)fields[i - 1].Offset + fields[i - 1].Size > fields[i].Offset)
            {
                throw Mismatch(type, fields[i].Name, $"it overlaps {fields[i - 1].Name}");
            }
        }
        return new TypeLayout(type, size, alignment, fields);
    }

    private static InvalidOperationException Mismatch(Type type, string? field, string reason)
        => new(field is null
            ? $"The compiled layout of '{type.FullName}' is invalid: {reason}. Rebuild with the Manaloc generator of this Manaloc version."
            : $"The compiled layout of '{type.FullName}' is invalid: field '{field}': {reason}. Rebuild with the Manaloc generator of this Manaloc version.");
}
