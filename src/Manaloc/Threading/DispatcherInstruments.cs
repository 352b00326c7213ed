using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using Manaloc.Diagnostics;

namespace Manaloc.Threading;

/// <summary>The dispatchers' observable instruments on the Threading meter, one measurement per live dispatcher, read from its statistics.</summary>
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
        meter.CreateObservableGauge("manaloc.dispatcher.deepest_queue", () => Observe(s => s.DeepestQueue), "{item}", "Deepest queue seen.");
        meter.CreateObservableCounter("manaloc.dispatcher.busy_time", ObserveBusy, "s", "Worker time spent awake, summed over workers.");
    }

    private static IEnumerable<Measurement<long>> Observe(Func<DispatcherStatistics, long> read)
    {
        foreach (var d in s_live.Keys)
        {
            yield return Tagged(read(d.GetStatistics()), d);
        }
    }

    private static IEnumerable<Measurement<double>> ObserveBusy()
    {
        foreach (var d in s_live.Keys)
        {
            yield return Tagged(d.GetStatistics().BusyTime.TotalSeconds, d);
        }
    }

    private static Measurement<T> Tagged<T>(T value, DedicatedThreadDispatcher d) where T : struct
        => new(value, new KeyValuePair<string, object?>(ManalocTelemetry.NameTag, d.Name), new KeyValuePair<string, object?>(ManalocTelemetry.KindTag, "dispatcher"));
}
