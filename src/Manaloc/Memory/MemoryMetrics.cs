using System.Diagnostics.Metrics;

namespace Manaloc.Memory;

/// <summary>
/// The Memory area's observable instruments on <see cref="Diagnostics.ManalocMeters.Memory"/>, created
/// once and reading every live allocator when observed, so an unobserved instrument costs nothing.
/// </summary>
/// <remarks>Allocators register at construction and unregister at Dispose (the registry holds weak
/// references, so a forgotten allocator does not stay reachable through it). Guarded by <c>s_lock</c>.</remarks>
internal static class MemoryMetrics
{
    private static readonly object s_lock = new();
    private static readonly List<WeakReference<NativeSlabAllocator>> s_slabs = [];
    private static readonly List<WeakReference<TypeAllocator>> s_typeAllocators = [];
    private static bool s_created;
    // The suffix TypeAllocator gives its slab's name (TypeAllocator.cs).
    internal const string TypeAllocatorSuffix = " (TypeAllocator)";

    public static void Register(NativeSlabAllocator slab) => Add(s_slabs, slab);
    public static void Unregister(NativeSlabAllocator slab) => Remove(s_slabs, slab);
    public static void Register(TypeAllocator allocator) => Add(s_typeAllocators, allocator);
    public static void Unregister(TypeAllocator allocator) => Remove(s_typeAllocators, allocator);

    private static void Add<T>(List<WeakReference<T>> list, T item) where T : class
    {
        lock (s_lock)
        {
            EnsureInstruments();
            list.RemoveAll(w => !w.TryGetTarget(out _));
            list.Add(new WeakReference<T>(item));
        }
    }

    private static void Remove<T>(List<WeakReference<T>> list, T item) where T : class
    {
        lock (s_lock)
        {
            list.RemoveAll(w => !w.TryGetTarget(out var t) || ReferenceEquals(t, item));
        }
    }

    private static List<T> Live<T>(List<WeakReference<T>> list) where T : class
    {
        lock (s_lock)
        {
            var live = new List<T>(list.Count);
            foreach (var w in list)
            {
                if (w.TryGetTarget(out var t)) live.Add(t);
            }
            return live;
        }
    }

    private static void EnsureInstruments()
    {
        if (s_created) return;
        s_created = true;
        var meter = Diagnostics.ManalocMeters.Memory;
        meter.CreateObservableUpDownCounter("manaloc.memory.reserved", () => Slab(s => s.ReservedBytes), "By", "Native bytes held by slab allocators (chunks and large blocks).");
        meter.CreateObservableUpDownCounter("manaloc.memory.chunks", () => Slab(s => s.Chunks), "{chunk}", "Size-class chunks held by slab allocators.");
        meter.CreateObservableUpDownCounter("manaloc.memory.blocks.live", () => Slab(s => s.LiveBlocks), "{block}", "Blocks handed out and not freed.");
        meter.CreateObservableCounter("manaloc.memory.allocations", () => Slab(s => s.Allocations), "{allocation}", "Allocations by slab allocators.");
        meter.CreateObservableUpDownCounter("manaloc.memory.objects.live", () => Objects(bytes: false), "{object}", "Live TypeAllocator objects and record arrays, by type.");
        meter.CreateObservableUpDownCounter("manaloc.memory.objects.live_bytes", () => Objects(bytes: true), "By", "Native bytes of live TypeAllocator objects and record arrays, by type.");
        meter.CreateObservableUpDownCounter("manaloc.memory.record_pool", () => new Measurement<long>(RecordChunks.PooledBytes,
                new KeyValuePair<string, object?>(Diagnostics.ManalocTelemetry.KindTag, "record-pool")),
            "By", "Native bytes of TypeAllocator chunks and large record blocks waiting in the process-wide pool for reuse (address space; on Linux their pages are given back).");
    }

    /// <summary>One measurement per name and kind, summed over the slabs that share them (see <see cref="Diagnostics.TaggedMeasurements{T}"/>).</summary>
    private static List<Measurement<long>> Slab(Func<SlabStatistics, long> pick)
    {
        var sums = Diagnostics.TaggedMeasurements<long>.Summed(static (a, b) => a + b);
        foreach (var slab in Live(s_slabs))
        {
            if (slab.IsDisposed) continue;
            // A TypeAllocator's own slab is named "X (TypeAllocator)"; its instruments carry the allocator's
            // name X and kind type-allocator, as the per-type instruments do (one tag scheme: ManalocTelemetry).
            bool owned = slab.OwnedByTypeAllocator && slab.Name.EndsWith(TypeAllocatorSuffix, StringComparison.Ordinal);
            string name = owned ? slab.Name[..^TypeAllocatorSuffix.Length] : slab.Name;
            sums.Add(pick(slab.GetStatistics()), name, owned ? "type-allocator" : "slab-allocator");
        }
        return sums.ToMeasurements();
    }

    /// <summary>One measurement per allocator name and record type, summed over the allocators that share the name.</summary>
    private static List<Measurement<long>> Objects(bool bytes)
    {
        var sums = Diagnostics.TaggedMeasurements<long>.Summed(static (a, b) => a + b);
        foreach (var allocator in Live(s_typeAllocators))
        {
            if (allocator.IsDisposed) continue;
            foreach (var entry in allocator.GetLiveObjects(withStacks: false).Entries)
            {
                sums.Add(bytes ? entry.Bytes : entry.Count, allocator.Name, "type-allocator", entry.TypeName);
            }
        }
        return sums.ToMeasurements();
    }
}
