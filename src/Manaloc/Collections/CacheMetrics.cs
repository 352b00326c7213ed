using System.Diagnostics.Metrics;
using Manaloc.Diagnostics;

namespace Manaloc.Collections;

/// <summary>What a cache reports to the meters.</summary>
internal interface IMeteredCache
{
    string Name { get; }
    long Entries { get; }
    long NativeBytes { get; }
    long Hits { get; }
    long Misses { get; }
    long Evictions { get; }
    long Expirations { get; }
    long Refusals { get; }
}

/// <summary>
/// The caches' observable instruments on <see cref="ManalocMeters.Memory"/>, created at the first cache and reading every
/// live cache when observed (an unobserved instrument costs nothing). Tags <c>name</c> and <c>kind</c> (<c>native-cache</c>).
/// </summary>
/// <remarks>Caches register at construction and unregister at Dispose; weak references, so a forgotten cache does not stay
/// reachable through the registry (its finalizer reports the leak). Guarded by <c>s_lock</c>.</remarks>
internal static class CacheMetrics
{
    private static readonly object s_lock = new();
    private static readonly List<WeakReference<IMeteredCache>> s_caches = [];
    private static bool s_created;

    public static void Register(IMeteredCache cache)
    {
        lock (s_lock)
        {
            if (!s_created)
            {
                s_created = true;
                var meter = ManalocMeters.Memory;
                meter.CreateObservableUpDownCounter("manaloc.cache.entries", () => Read(c => c.Entries), "{entry}", "Entries held by native caches.");
                meter.CreateObservableUpDownCounter("manaloc.cache.native_bytes", () => Read(c => c.NativeBytes), "By", "Native bytes held by native caches (index and blocks, used or not).");
                meter.CreateObservableCounter("manaloc.cache.hits", () => Read(c => c.Hits), "{read}", "Native cache reads that found a live entry.");
                meter.CreateObservableCounter("manaloc.cache.misses", () => Read(c => c.Misses), "{read}", "Native cache reads that found none.");
                meter.CreateObservableCounter("manaloc.cache.evictions", () => Read(c => c.Evictions), "{entry}", "Entries native caches removed to make room.");
                meter.CreateObservableCounter("manaloc.cache.expirations", () => Read(c => c.Expirations), "{entry}", "Expired entries native caches removed.");
                meter.CreateObservableCounter("manaloc.cache.refusals", () => Read(c => c.Refusals), "{entry}", "Entries native caches refused (above MaxEntryBytes, or already expired).");
            }
            s_caches.RemoveAll(w => !w.TryGetTarget(out _));
            s_caches.Add(new WeakReference<IMeteredCache>(cache));
        }
    }

    public static void Unregister(IMeteredCache cache)
    {
        lock (s_lock) s_caches.RemoveAll(w => !w.TryGetTarget(out var c) || ReferenceEquals(c, cache));
    }

    private static IEnumerable<Measurement<long>> Read(Func<IMeteredCache, long> pick)
    {
        List<IMeteredCache> live;
        lock (s_lock)
        {
            live = new List<IMeteredCache>(s_caches.Count);
            foreach (var w in s_caches)
            {
                if (w.TryGetTarget(out var c)) live.Add(c);
            }
        }
        foreach (var cache in live)
        {
            yield return new Measurement<long>(pick(cache),
                new KeyValuePair<string, object?>(ManalocTelemetry.NameTag, cache.Name),
                new KeyValuePair<string, object?>(ManalocTelemetry.KindTag, "native-cache"));
        }
    }
}
