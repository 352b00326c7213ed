using System.Collections.Concurrent;
using System.Diagnostics.CodeAnalysis;

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
    private static readonly List<string> s_tagNames = ["(untyped)"];
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

    /// <summary>Implementations generated for <paramref name="type"/> (both modes), for tests.</summary>
    public static int GenerationsOf(Type type) => s_byGenerated.Values.Count(r => r.Interface == type);

    public static string TagName(ushort tag)
    {
        lock (s_tagLock) return tag < s_tagNames.Count ? s_tagNames[tag] : $"(tag {tag})";
    }

    [RequiresDynamicCode("Emits the implementation with Reflection.Emit.")]
    [RequiresUnreferencedCode("Reads the interface through reflection.")]
    private static unsafe RecordType Generate(Type type, RecordMode mode)
    {
        var layout = TypeLayout.Of(type);
        var (generated, create) = RecordEmitter.Emit(layout, mode);
        // Index: dense and unique per generated type (tags are per name and may be shared by two interfaces).
        int index = Interlocked.Increment(ref s_nextIndex);
        var record = new RecordType(type, layout, generated, mode, (delegate*<NativeRecord>)create, NewTag(TypeName(type)), NewTag($"RecordArray<{TypeName(type)}>"), index);
        s_byGenerated[generated] = record;
        Interlocked.Increment(ref s_generatedCount); // statistics: read by tests and the first-use experiment
        return record;
    }

    private static ushort NewTag(string name)
    {
        lock (s_tagLock)
        {
            int existing = s_tagNames.IndexOf(name);
            if (existing >= 0) return (ushort)existing;
            if (s_tagNames.Count > ushort.MaxValue) return 0;
            s_tagNames.Add(name);
            return (ushort)(s_tagNames.Count - 1);
        }
    }

    internal static string TypeName(Type type)
        => type.IsGenericType
            ? $"{type.Name[..type.Name.IndexOf('`', StringComparison.Ordinal)]}<{string.Join(", ", type.GetGenericArguments().Select(TypeName))}>"
            : type.DeclaringType is { } outer ? $"{TypeName(outer)}.{type.Name}" : type.Name;
}
