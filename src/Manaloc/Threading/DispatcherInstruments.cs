using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using Manaloc.Diagnostics;

namespace Manaloc.Threading;

/// <summary>The dispatchers' observable instruments on the Threading meter, one measurement per dispatcher name, read from the live dispatchers' statistics.</summary>
/// <remarks>Thread-safe: the live set is a concurrent dictionary; the instruments are created once, by the first dispatcher.</remarks>
internal static class DispatcherInstruments
{
    private static readonly ConcurrentDictionary<DedicatedThreadDispatcher, byte> s_live = new();
    private static int s_created;

    /// <summary>Adds a dispatcher to the measurements (its constructor).</summary>
    public static void Register(DedicatedThreadDispatcher dispatcher)
    {
        s_live.TryAdd(dispatcher, 0);
        // Exchange: exactly one caller creates the instruments, however many dispatchers start at once.
        if (Interlocked.Exchange(ref s_created, 1) == 0)
        {
            Create(ManalocMeters.Threading);
        }
    }

    /// <summary>Removes a dispatcher once its last worker has exited.</summary>
    public static void Unregister(DedicatedThreadDispatcher dispatcher) => s_live.TryRemove(dispatcher, out _);

    private static void Create(Meter meter)
    {
        meter.CreateObservableUpDownCounter("manaloc.dispatcher.queued", () => Observe(s => s.Queued), "{item}", "Items queued now, per dispatcher.");
        meter.CreateObservableCounter("manaloc.dispatcher.posted", () => Observe(s => s.Posted), "{item}", "Items accepted.");
        meter.CreateObservableCounter("manaloc.dispatcher.executed", () => Observe(s => s.Executed), "{item}", "Items run.");
        meter.CreateObservableCounter("manaloc.dispatcher.failed", () => Observe(s => s.Failed), "{item}", "Items that threw.");
        meter.CreateObservableCounter("manaloc.dispatcher.rejected", () => Observe(s => s.Rejected), "{item}", "Posts refused (full, shutting down, or cancelled before queued).");
        meter.CreateObservableCounter("manaloc.dispatcher.dropped", () => Observe(s => s.Dropped), "{item}", "Items dropped by DropOldest.");
        meter.CreateObservableGauge("manaloc.dispatcher.deepest_queue", () => Observe(s => s.DeepestQueue, Math.Max), "{item}", "Deepest queue seen.");
        meter.CreateObservableCounter("manaloc.dispatcher.busy_time", ObserveBusy, "s", "Worker time spent awake, summed over workers.");
    }

    /// <summary>One measurement per dispatcher name (see <see cref="TaggedMeasurements{T}"/>): dispatchers sharing one add up
    /// (<paramref name="combine"/> null) or, for a high-water gauge, give the largest.</summary>
    private static List<Measurement<long>> Observe(Func<DispatcherStatistics, long> read, Func<long, long, long>? combine = null)
    {
        var values = new TaggedMeasurements<long>(combine ?? (static (a, b) => a + b));
        foreach (var d in s_live.Keys) values.Add(read(d.GetStatistics()), d.Name, Kind);
        return values.ToMeasurements();
    }

    private static List<Measurement<double>> ObserveBusy()
    {
        var sums = TaggedMeasurements<double>.Summed(static (a, b) => a + b);
        foreach (var d in s_live.Keys) sums.Add(d.GetStatistics().BusyTime.TotalSeconds, d.Name, Kind);
        return sums.ToMeasurements();
    }

    private const string Kind = "dispatcher";
}
