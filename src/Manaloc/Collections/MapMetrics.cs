using System.Diagnostics.Metrics;
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

/// <summary>
/// The maps' observable instruments on <see cref="ManalocMeters.Memory"/>, created at the first map and reading
/// every live map when observed, so an unobserved instrument costs nothing.
/// </summary>
/// <remarks>Maps register at construction and unregister at Dispose; the registry holds weak references, so a
/// forgotten map does not stay reachable through it (its finalizer reports the leak). Guarded by <c>s_lock</c>.</remarks>
internal static class MapMetrics
{
    private static readonly object s_lock = new();
    private static readonly List<WeakReference<IMeteredMap>> s_maps = [];
    private static bool s_created;

    public static void Register(IMeteredMap map)
    {
        lock (s_lock)
        {
            if (!s_created)
            {
                s_created = true;
                var meter = ManalocMeters.Memory;
                meter.CreateObservableUpDownCounter("manaloc.map.entries", () => Read(m => m.EntryCount), "{entry}", "Entries held by native maps.");
                meter.CreateObservableUpDownCounter("manaloc.map.native_bytes", () => Read(m => m.NativeBytes), "By", "Native bytes held by native maps (buckets, directory, overflow arena).");
                meter.CreateObservableCounter("manaloc.map.resizes", () => Read(m => m.Resizes), "{split}", "Bucket splits of native maps: each grows the table by one bucket.");
            }
            s_maps.RemoveAll(w => !w.TryGetTarget(out _));
            s_maps.Add(new WeakReference<IMeteredMap>(map));
        }
    }

    public static void Unregister(IMeteredMap map)
    {
        lock (s_lock) s_maps.RemoveAll(w => !w.TryGetTarget(out var m) || ReferenceEquals(m, map));
    }

    private static IEnumerable<Measurement<long>> Read(Func<IMeteredMap, long> pick)
    {
        List<IMeteredMap> live;
        lock (s_lock)
        {
            live = new List<IMeteredMap>(s_maps.Count);
            foreach (var w in s_maps)
            {
                if (w.TryGetTarget(out var m)) live.Add(m);
            }
        }
        foreach (var map in live)
        {
            yield return new Measurement<long>(pick(map),
                new KeyValuePair<string, object?>(ManalocTelemetry.NameTag, map.Name),
                new KeyValuePair<string, object?>(ManalocTelemetry.KindTag, map.Kind));
        }
    }

    /// <summary>The leak report of a map the GC found undisposed: the <c>Leak</c> event, naming it, its entries and bytes.</summary>
    public static void ReportLeak(string description, long entries, long bytes)
        => ManalocEventSource.Log.Leak($"{description}, never disposed (its native memory is kept: dispose every map)", entries, bytes);

    /// <summary><c>NativeMap&lt;long, Order&gt;</c>: the kind with its type arguments as C# writes them.</summary>
    public static string Describe(string kind, Type key, Type value)
        => $"{kind}<{Memory.RecordTypes.TypeName(key)}, {Memory.RecordTypes.TypeName(value)}>";
}
