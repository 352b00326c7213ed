using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using Manaloc.Diagnostics;

namespace Manaloc.Threading;

// Statistics as properties, and observable instruments on ManalocMeters.Threading that read them.
public sealed partial class DedicatedThreadDispatcher
{
    private static readonly ConcurrentDictionary<DedicatedThreadDispatcher, byte> s_live = new();
    private static int s_instrumentsCreated;
    private int _pinned;

    /// <summary>Items queued now (accepted and not yet taken by a worker, the drain or a drop).</summary>
    public long QueuedCount => Math.Max(0, (Volatile.Read(ref _tail.Value) & ~ClosedBit) - Volatile.Read(ref _head.Value));

    /// <summary>Items accepted since creation.</summary>
    public long PostedCount => Volatile.Read(ref _tail.Value) & ~ClosedBit;

    /// <summary>Items run by the workers, whether they returned or threw.</summary>
    public long ExecutedCount => SumStats(static (ref WorkerStats s) => Volatile.Read(ref s.Executed));

    /// <summary>Items that threw (a subset of <see cref="ExecutedCount"/>).</summary>
    public long FailedCount => SumStats(static (ref WorkerStats s) => Volatile.Read(ref s.Failed));

    /// <summary>Posts refused: a full queue in <see cref="FullQueueMode.FailFast"/> mode or for <see cref="TryPost"/>, or a shutdown.</summary>
    public long RejectedCount => _rejected.Sum();

    /// <summary>Items removed by <see cref="FullQueueMode.DropOldest"/> and handed to the drop callback.</summary>
    public long DroppedCount => _dropped.Sum();

    /// <summary>Items handed back by the shutdown because they did not run before its deadline.</summary>
    public long ReturnedCount => Volatile.Read(ref _returned);

    /// <summary>The deepest the queue has been, sampled when items are accepted.</summary>
    /// <remarks>Exact when the queue fills (a post finds it full); otherwise sampled on every 64th item, so a peak between samples may read up to 63 low. Sampling keeps producers from reading the workers' head index on every post.</remarks>
    public long DeepestQueue => Volatile.Read(ref _deepest);

    /// <summary>Workers that were pinned to their processor (see <see cref="DispatcherOptions.ProcessorAffinity"/>).</summary>
    public int PinnedThreadCount => Volatile.Read(ref _pinned);

    /// <summary>Time the workers have spent awake (running items or looking for them), summed over workers.</summary>
    /// <remarks>Measured on the options' <see cref="TimeProvider"/> per awake interval, not per item, so it costs nothing per item.</remarks>
    public TimeSpan BusyTime
    {
        get
        {
            long now = _timeProvider.GetTimestamp();
            long ticks = 0;
            for (int i = 0; i < _stats.Length; i++)
            {
                ref WorkerStats s = ref _stats[i].Value;
                long since = Volatile.Read(ref s.BusySince);
                ticks += Volatile.Read(ref s.BusyTicks) + (since != 0 ? Math.Max(0, now - since) : 0);
            }
            return TimeSpan.FromSeconds((double)ticks / _timeProvider.TimestampFrequency);
        }
    }

    private delegate long StatReader(ref WorkerStats stats);

    private long SumStats(StatReader read)
    {
        long sum = 0;
        for (int i = 0; i < _stats.Length; i++) sum += read(ref _stats[i].Value);
        return sum;
    }

    private void Register()
    {
        s_live.TryAdd(this, 0);
        if (Interlocked.Exchange(ref s_instrumentsCreated, 1) == 0)
        {
            CreateInstruments(ManalocMeters.Threading);
        }
    }

    private void Unregister() => s_live.TryRemove(this, out _);

    private static void CreateInstruments(Meter meter)
    {
        meter.CreateObservableUpDownCounter("manaloc.dispatcher.queued", () => Observe(d => d.QueuedCount), "{item}", "Items queued now, per dispatcher.");
        meter.CreateObservableCounter("manaloc.dispatcher.posted", () => Observe(d => d.PostedCount), "{item}", "Items accepted.");
        meter.CreateObservableCounter("manaloc.dispatcher.executed", () => Observe(d => d.ExecutedCount), "{item}", "Items run.");
        meter.CreateObservableCounter("manaloc.dispatcher.failed", () => Observe(d => d.FailedCount), "{item}", "Items that threw.");
        meter.CreateObservableCounter("manaloc.dispatcher.rejected", () => Observe(d => d.RejectedCount), "{item}", "Posts refused (full or shutting down).");
        meter.CreateObservableCounter("manaloc.dispatcher.dropped", () => Observe(d => d.DroppedCount), "{item}", "Items dropped by DropOldest.");
        meter.CreateObservableGauge("manaloc.dispatcher.deepest_queue", () => Observe(d => d.DeepestQueue), "{item}", "Deepest queue seen.");
        meter.CreateObservableCounter("manaloc.dispatcher.busy_time", ObserveBusy, "s", "Worker time spent awake, summed over workers.");
    }

    private static IEnumerable<Measurement<long>> Observe(Func<DedicatedThreadDispatcher, long> read)
    {
        foreach (var d in s_live.Keys)
        {
            yield return new Measurement<long>(read(d), new KeyValuePair<string, object?>("dispatcher", d._name));
        }
    }

    private static IEnumerable<Measurement<double>> ObserveBusy()
    {
        foreach (var d in s_live.Keys)
        {
            yield return new Measurement<double>(d.BusyTime.TotalSeconds, new KeyValuePair<string, object?>("dispatcher", d._name));
        }
    }
}
