using System.Diagnostics.Metrics;
using Manaloc.Diagnostics;

namespace Manaloc.Pooling;

/// <summary>
/// The observable instruments of the <c>Manaloc.Pooling</c> meter, over every live pool and buffer
/// manager: <c>manaloc.pool.rents</c>, <c>.local_hits</c>, <c>.shared_transfers</c>, <c>.creations</c>,
/// <c>.drops</c>, <c>.trimmed</c> (counters) and <c>.retained</c> (up-down counter), tagged
/// <c>name</c> (the pool's name) and <c>kind</c> (<c>object-pool</c> or <c>buffer-manager</c>); and, for
/// buffer managers only (an object pool does not know its objects' sizes), <c>.retained_bytes</c> and
/// <c>.rented_bytes</c> (up-down counters, in bytes).
/// </summary>
/// <remarks>
/// Pools register weakly, so a forgotten pool is not kept alive by its metrics. The instruments read
/// counters the pools keep anyway: an unobserved pool pays nothing. Thread safety: the source list is
/// guarded by a lock; observation callbacks take a snapshot of it.
/// </remarks>
internal static class PoolMetrics
{
    private static readonly Lock s_lock = new();
    private static readonly List<WeakReference<IPoolStatisticsSource>> s_sources = [];

    /// <summary>Names of every instrument, for tests and docs.</summary>
    public static readonly string[] InstrumentNames =
    [
        "manaloc.pool.rents", "manaloc.pool.local_hits", "manaloc.pool.shared_transfers", "manaloc.pool.creations",
        "manaloc.pool.drops", "manaloc.pool.trimmed", "manaloc.pool.retained",
        "manaloc.pool.retained_bytes", "manaloc.pool.rented_bytes",
    ];

    static PoolMetrics()
    {
        var meter = ManalocMeters.Pooling;
        meter.CreateObservableCounter(InstrumentNames[0], () => Observe(s => s.Rents), "{object}", "Objects handed out.");
        meter.CreateObservableCounter(InstrumentNames[1], () => Observe(s => s.LocalHits), "{object}", "Rents served from the calling thread's own stack.");
        meter.CreateObservableCounter(InstrumentNames[2], () => Observe(s => s.SharedTransfers), "{batch}", "Batches moved between a thread's stack and the shared tier.");
        meter.CreateObservableCounter(InstrumentNames[3], () => Observe(s => s.Creations), "{object}", "Objects created by the policy.");
        meter.CreateObservableCounter(InstrumentNames[4], () => Observe(s => s.Drops), "{object}", "Returned objects not kept.");
        meter.CreateObservableCounter(InstrumentNames[5], () => Observe(s => s.Trimmed), "{object}", "Idle objects released by trimming.");
        meter.CreateObservableUpDownCounter(InstrumentNames[6], () => Observe(s => s.Retained), "{object}", "Idle objects held now.");
        meter.CreateObservableUpDownCounter(InstrumentNames[7], () => Observe(s => s.RetainedBytes, bytesOnly: true), "By", "Bytes of the idle buffers a buffer manager holds now.");
        meter.CreateObservableUpDownCounter(InstrumentNames[8], () => Observe(s => s.RentedBytes, bytesOnly: true), "By", "Bytes of pooled buffers rented and not yet returned.");
    }

    /// <summary>Publishes <paramref name="source"/>'s counters until it is unregistered or collected.</summary>
    public static void Register(IPoolStatisticsSource source)
    {
        lock (s_lock)
        {
            s_sources.RemoveAll(w => !w.TryGetTarget(out _));
            s_sources.Add(new WeakReference<IPoolStatisticsSource>(source));
        }
    }

    /// <summary>Stops publishing <paramref name="source"/>.</summary>
    public static void Unregister(IPoolStatisticsSource source)
    {
        lock (s_lock)
        {
            s_sources.RemoveAll(w => !w.TryGetTarget(out var s) || ReferenceEquals(s, source));
        }
    }

    /// <summary>One measurement per name and kind, the sum over the live sources that share them (see
    /// <see cref="TaggedMeasurements{T}"/>); <paramref name="bytesOnly"/>: only the sources whose statistics count bytes (buffer managers).</summary>
    private static List<Measurement<long>> Observe(Func<PoolStatistics, long> pick, bool bytesOnly = false)
    {
        IPoolStatisticsSource?[] sources;
        lock (s_lock)
        {
            sources = s_sources.Select(w => w.TryGetTarget(out var s) ? s : null).ToArray();
        }
        var sums = TaggedMeasurements<long>.Summed(static (a, b) => a + b);
        foreach (var source in sources)
        {
            if (source is null || (bytesOnly && !source.CountsBytes)) continue;
            sums.Add(pick(source.GetStatistics()), source.Name, source.Kind);
        }
        return sums.ToMeasurements();
    }
}
