using System.Collections.Concurrent;
using System.Diagnostics.CodeAnalysis;
using System.Text;
using Manaloc.Memory.CompilerServices;

namespace Manaloc.Memory;

/// <summary>
/// The process-wide cache of generated record implementations: one per (interface, mode), generated
/// exactly once even when many threads race on first use (a <see cref="Lazy{T}"/> in
/// execution-and-publication mode per key; a failure is cached too, so an invalid type always fails
/// the same way).
/// </summary>
internal static partial class RecordTypes
{
    private static readonly ConcurrentDictionary<(Type, RecordMode), Lazy<RecordType>> s_types = new();
    private static readonly ConcurrentDictionary<Type, RecordType> s_byGenerated = new();
    private static readonly object s_tagLock = new();
    // Tag → (short name, full name); one tag per interface (and one per interface's arrays), so two interfaces that share
    // a simple name never share a tag. Guarded by s_tagLock.
    private static readonly List<(string Short, string Full)> s_tagNames = [("(untyped)", "(untyped)")];
    private static readonly Dictionary<(Type, bool), ushort> s_tags = [];
    private static long s_generatedCount;
    private static int s_nextIndex = -1;

    /// <summary>Implementations generated so far in this process (each (interface, mode) counts once).</summary>
    public static long GeneratedCount => Interlocked.Read(ref s_generatedCount); // statistics: no ordering needed

    [RequiresDynamicCode("Emits the implementation with Reflection.Emit.")]
    [RequiresUnreferencedCode("Reads the interface through reflection.")]
    public static RecordType Get(Type type, RecordMode mode)
    {
        ArgumentNullException.ThrowIfNull(type);
        var lazy = s_types.GetOrAdd((type, mode), static key => new Lazy<RecordType>(() => Generate(key.Item1, key.Item2), LazyThreadSafetyMode.ExecutionAndPublication));
        return lazy.Value;
    }

    public static RecordType OfGenerated(Type generated) => s_byGenerated[generated];

    /// <summary>The record type of a generated class, if <paramref name="generated"/> is one (serialization asks about any type).</summary>
    public static bool TryOfGenerated(Type generated, [System.Diagnostics.CodeAnalysis.NotNullWhen(true)] out RecordType? record)
        => s_byGenerated.TryGetValue(generated, out record);

    /// <summary>Implementations generated for <paramref name="type"/> (both modes), for tests.</summary>
    public static int GenerationsOf(Type type) => s_byGenerated.Values.Count(r => r.Interface == type);

    /// <summary>The name of a tag: C#-style, namespace-free (<c>Outer&lt;int&gt;.IFoo</c>, <c>RecordArray&lt;IFoo&gt;</c>), or with namespaces when <paramref name="full"/>.</summary>
    public static string TagName(ushort tag, bool full = false)
    {
        lock (s_tagLock)
        {
            if (tag >= s_tagNames.Count) return $"(tag {tag})";
            return full ? s_tagNames[tag].Full : s_tagNames[tag].Short;
        }
    }

    [RequiresDynamicCode("Emits the implementation with Reflection.Emit.")]
    [RequiresUnreferencedCode("Reads the interface through reflection.")]
    private static unsafe RecordType Generate(Type type, RecordMode mode)
    {
        var layout = TypeLayout.Of(type);
        var (generated, create) = RecordEmitter.Emit(layout, mode);
        // Index: dense and unique per generated type (tags are per name and may be shared by two interfaces).
        int index = Interlocked.Increment(ref s_nextIndex);
        var record = new RecordType(type, layout, generated, mode, (delegate*<NativeRecord>)create, NewTag(type, array: false), NewTag(type, array: true), index);
        s_byGenerated[generated] = record;
        Interlocked.Increment(ref s_generatedCount); // statistics: read by tests and the first-use experiment
        return record;
    }

    private static ushort NewTag(Type type, bool array)
    {
        lock (s_tagLock)
        {
            if (s_tags.TryGetValue((type, array), out ushort existing)) return existing;
            if (s_tagNames.Count > ushort.MaxValue) return 0;
            string shortName = TypeName(type), fullName = TypeName(type, withNamespace: true);
            s_tagNames.Add(array ? ($"RecordArray<{shortName}>", $"Manaloc.Memory.RecordArray<{fullName}>") : (shortName, fullName));
            ushort tag = (ushort)(s_tagNames.Count - 1);
            s_tags[(type, array)] = tag;
            return tag;
        }
    }

    /// <summary>
    /// A type's name as C# writes it: <c>Holder&lt;int&gt;.IInner</c>, not the metadata's <c>IInner</c> or
    /// <c>Holder`1</c>; keywords for the built-in types; with the namespace (of the outermost type and of every
    /// type argument) when <paramref name="withNamespace"/>.
    /// </summary>
    internal static string TypeName(Type type, bool withNamespace = false)
    {
        if (type.IsArray) return $"{TypeName(type.GetElementType()!, withNamespace)}[{new string(',', type.GetArrayRank() - 1)}]";
        if (type.IsPointer) return $"{TypeName(type.GetElementType()!, withNamespace)}*";
        if (Nullable.GetUnderlyingType(type) is { } underlying) return $"{TypeName(underlying, withNamespace)}?";
        if (Keyword(type) is { } keyword) return keyword;
        // The nesting chain, outermost first; a nested type's generic arguments are its declaring types' followed by its own.
        var chain = new List<Type>();
        for (Type? t = type; t is not null; t = t.DeclaringType) chain.Insert(0, t);
        var arguments = type.IsGenericType ? type.GetGenericArguments() : [];
        var sb = new StringBuilder();
        if (withNamespace && !string.IsNullOrEmpty(chain[0].Namespace)) sb.Append(chain[0].Namespace).Append('.');
        int used = 0;
        foreach (var level in chain)
        {
            if (level != chain[0]) sb.Append('.');
            string name = level.Name;
            int tick = name.IndexOf('`', StringComparison.Ordinal);
            sb.Append(tick >= 0 ? name[..tick] : name);
            // Arguments this level adds: its own count (its definition's arguments) minus its declaring type's.
            int total = level.IsGenericType ? level.GetGenericTypeDefinition().GetGenericArguments().Length : 0;
            int own = Math.Min(total - used, arguments.Length - used);
            if (own > 0)
            {
                sb.Append('<');
                for (int i = 0; i < own; i++)
                {
                    if (i > 0) sb.Append(", ");
                    sb.Append(TypeName(arguments[used + i], withNamespace));
                }
                sb.Append('>');
                used += own;
            }
        }
        return sb.ToString();
    }

    private static string? Keyword(Type type) => Type.GetTypeCode(type) switch
    {
        _ when type.IsEnum => null,
        TypeCode.Boolean => "bool",
        TypeCode.Byte => "byte",
        TypeCode.SByte => "sbyte",
        TypeCode.Char => "char",
        TypeCode.Int16 => "short",
        TypeCode.UInt16 => "ushort",
        TypeCode.Int32 => "int",
        TypeCode.UInt32 => "uint",
        TypeCode.Int64 => "long",
        TypeCode.UInt64 => "ulong",
        TypeCode.Single => "float",
        TypeCode.Double => "double",
        TypeCode.Decimal => "decimal",
        TypeCode.String => "string",
        _ => type == typeof(nint) ? "nint" : type == typeof(nuint) ? "nuint" : type == typeof(object) ? "object" : null,
    };
}
