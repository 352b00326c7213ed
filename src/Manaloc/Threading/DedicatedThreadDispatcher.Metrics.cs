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
    private long _busyReported; // the largest BusyTime (in timestamp ticks) returned so far

    /// <summary>Items queued now (accepted and not yet taken by a worker, the drain or a drop).</summary>
    public long QueuedCount => Math.Max(0, (Volatile.Read(ref _tail.Value) & ~ClosedBit) - Volatile.Read(ref _head.Value));

    /// <summary>Items accepted since creation.</summary>
    public long PostedCount => Volatile.Read(ref _tail.Value) & ~ClosedBit;

    /// <summary>Items run by the workers, whether they returned or threw.</summary>
    public long ExecutedCount => SumStats(static (ref WorkerStats s) => Volatile.Read(ref s.Executed));

    /// <summary>Items that threw (a subset of <see cref="ExecutedCount"/>).</summary>
    public long FailedCount => SumStats(static (ref WorkerStats s) => Volatile.Read(ref s.Failed));

    /// <summary>Posts refused: a full queue in <see cref="FullQueueMode.FailFast"/> mode or for <see cref="TryPost"/>, a shutdown, or a <see cref="PostAsync"/> whose token was cancelled before the item was queued.</summary>
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
    /// <remarks>
    /// Measured on the options' <see cref="TimeProvider"/> per awake interval, not per item, so it
    /// costs nothing per item. Never decreases from one read to the next (it backs an observable
    /// counter): a worker ending an interval may have read the clock just before a reader did, so a
    /// reading can run a little ahead of the worker's own total; the largest value returned so far
    /// is kept and returned until the total passes it.
    /// </remarks>
    public TimeSpan BusyTime
    {
        get
        {
            long ticks = 0;
            for (int i = 0; i < _stats.Length; i++) ticks += ReadBusyTicks(ref _stats[i].Value);
            long reported = Volatile.Read(ref _busyReported);
            // CAS loop: a maximum that only grows; a lost race retries against the larger value.
            while (ticks > reported)
            {
                long previous = Interlocked.CompareExchange(ref _busyReported, ticks, reported);
                if (previous == reported) break;
                reported = previous;
            }
            return TimeSpan.FromSeconds((double)Math.Max(ticks, reported) / _timeProvider.TimestampFrequency);
        }
    }

    /// <summary>One worker's busy ticks: a seqlock read of BusyTicks and BusySince (see EndBusy), plus the open interval.</summary>
    private long ReadBusyTicks(ref WorkerStats s)
    {
        SpinWait spin = default;
        while (true)
        {
            int version = Volatile.Read(ref s.BusyVersion); // acquire: the field reads below come after it
            if ((version & 1) == 0)
            {
                long since = Volatile.Read(ref s.BusySince);
                long ticks = Volatile.Read(ref s.BusyTicks);
                long open = since != 0 ? Math.Max(0, _timeProvider.GetTimestamp() - since) : 0;
                // Acquire reads above keep this re-read after them: unchanged means no EndBusy overlapped.
                if (Volatile.Read(ref s.BusyVersion) == version) return ticks + open;
            }
            spin.SpinOnce(); // an EndBusy is a few instructions; Sleep(1) fallback if its worker was preempted
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
        meter.CreateObservableCounter("manaloc.dispatcher.rejected", () => Observe(d => d.RejectedCount), "{item}", "Posts refused (full, shutting down, or cancelled before queued).");
        meter.CreateObservableCounter("manaloc.dispatcher.dropped", () => Observe(d => d.DroppedCount), "{item}", "Items dropped by DropOldest.");
        meter.CreateObservableGauge("manaloc.dispatcher.deepest_queue", () => Observe(d => d.DeepestQueue), "{item}", "Deepest queue seen.");
        meter.CreateObservableCounter("manaloc.dispatcher.busy_time", ObserveBusy, "s", "Worker time spent awake, summed over workers.");
    }

    private static IEnumerable<Measurement<long>> Observe(Func<DedicatedThreadDispatcher, long> read)
    {
        foreach (var d in s_live.Keys)
        {
            yield return new Measurement<long>(read(d), new KeyValuePair<string, object?>(ManalocTelemetry.NameTag, d._name), new KeyValuePair<string, object?>(ManalocTelemetry.KindTag, "dispatcher"));
        }
    }

    private static IEnumerable<Measurement<double>> ObserveBusy()
    {
        foreach (var d in s_live.Keys)
        {
            yield return new Measurement<double>(d.BusyTime.TotalSeconds, new KeyValuePair<string, object?>(ManalocTelemetry.NameTag, d._name), new KeyValuePair<string, object?>(ManalocTelemetry.KindTag, "dispatcher"));
        }
    }
}
