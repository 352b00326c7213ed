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

/// <summary>The caches' observable instruments on <see cref="ManalocMeters.Memory"/> (kind <c>native-cache</c>).</summary>
internal static class CacheMetrics
{
    /// <summary>The live caches: each registers at construction and unregisters at Dispose.</summary>
    public static readonly MeteredInstances<IMeteredCache> Caches = new(cache => cache.Name, _ => "native-cache", caches =>
    {
        caches.UpDownCounter("manaloc.cache.entries", c => c.Entries, "{entry}", "Entries held by native caches.");
        caches.UpDownCounter("manaloc.cache.native_bytes", c => c.NativeBytes, "By", "Native bytes reserved by native caches: index, sketch, block directory and the blocks allocated, used or not (on Linux the index and sketch pages are committed on first touch).");
        caches.Counter("manaloc.cache.hits", c => c.Hits, "{read}", "Native cache reads that found a live entry.");
        caches.Counter("manaloc.cache.misses", c => c.Misses, "{read}", "Native cache reads that found none.");
        caches.Counter("manaloc.cache.evictions", c => c.Evictions, "{entry}", "Entries native caches removed to make room.");
        caches.Counter("manaloc.cache.expirations", c => c.Expirations, "{entry}", "Expired entries native caches removed.");
        caches.Counter("manaloc.cache.refusals", c => c.Refusals, "{entry}", "Entries native caches refused (above MaxEntryBytes, or already expired).");
    });
}
