using Manaloc.Diagnostics;

namespace Manaloc.Collections;

/// <summary>What the maps report to the meters and the leak report.</summary>
internal interface IMeteredMap
{
    string Name { get; }
    /// <summary><c>native-map</c> or <c>concurrent-native-map</c>.</summary>
    string Kind { get; }
    long EntryCount { get; }
    long NativeBytes { get; }
    long Resizes { get; }
}

/// <summary>The maps' observable instruments on <see cref="ManalocMeters.Memory"/>, and their leak report.</summary>
internal static class MapMetrics
{
    /// <summary>The live maps: each registers at construction and unregisters at Dispose.</summary>
    public static readonly MeteredInstances<IMeteredMap> Maps = new(map => map.Name, map => map.Kind, maps =>
    {
        maps.UpDownCounter("manaloc.map.entries", m => m.EntryCount, "{entry}", "Entries held by native maps.");
        maps.UpDownCounter("manaloc.map.native_bytes", m => m.NativeBytes, "By", "Native bytes held by native maps (buckets, directory, overflow arena).");
        maps.Counter("manaloc.map.resizes", m => m.Resizes, "{split}", "Bucket splits of native maps: each grows the table by one bucket.");
    });

    /// <summary>The leak report of a map the GC found undisposed: the <c>Leak</c> event, naming it, its entries and bytes, and
    /// whether its memory stays (<paramref name="memoryKept"/>: a plain map's, a cache's) or goes back by its table's
    /// finalizer (a concurrent map's).</summary>
    public static void ReportLeak(string description, long entries, long bytes, bool memoryKept = true)
        => ManalocEventSource.Log.Leak(memoryKept
            ? $"{description}, never disposed (its native memory is kept: dispose every map)"
            : $"{description}, never disposed (its native memory is given back at a later collection: dispose every map)", entries, bytes);

    /// <summary><c>NativeMap&lt;long, Order&gt;</c>: the kind with its type arguments as C# writes them.</summary>
    public static string Describe(string kind, Type key, Type value)
        => $"{kind}<{Memory.RecordTypes.TypeName(key)}, {Memory.RecordTypes.TypeName(value)}>";
}
