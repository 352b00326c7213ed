using System.Collections.Concurrent;
using Manaloc.Threading;

namespace Manaloc.Lab.Experiments;

/// <summary>
/// Seed 002, "Tradeoffs in High Performance Software", tradeoff #3 (memory vs throughput): a
/// producer far faster than its consumer fills an unbounded queue without limit (1.1 GB in the
/// article); capping the queue at 10,000 items and blocking the producer kept memory at 5 MB at
/// the same throughput, because the consumer was the bottleneck all along.
/// </summary>
public sealed class BoundedQueue() : Experiment(
    "bounded-queue", "Tradeoffs in High Performance Software (seed 002)",
    "A fast producer and a slow consumer: peak queue memory and throughput, unbounded vs capped at 10,000 with a blocking producer.",
    [Unbounded, CappedBlocking, CappedDispatcher], Unbounded, quickSeconds: 15, quickLaunches: 2)
{
    private const int Cap = 10_000;
    private const int PayloadBytes = 256;
    private const string Unbounded = "unbounded BlockingCollection";
    private const string CappedBlocking = "BlockingCollection capped";
    private const string CappedDispatcher = "DedicatedThreadDispatcher capped";

    /// <summary>Target cost of one "send" by the consumer; the producer is an order of magnitude faster.</summary>
    private const double SendMicros = 2;
    private static int s_sendSpin = 80;
    private static long s_checksum;
    private static long s_sent;

    /// <inheritdoc/>
    public override Claim Claim => new("Capping the queue at 10,000 items: memory 1.1 GB → 5 MB at the same throughput", 1100.0 / 5,
        Metric.TimesBetter("capped dispatcher vs unbounded queue, peak queue memory", CappedDispatcher, Unbounded, In(Unit.Bytes)));
    /// <inheritdoc/>
    public override IReadOnlyList<Target> Targets =>
    [
        Target.AtMost("capped dispatcher's peak queue memory, % of unbounded", Unit.Percent, f => f.Median(CappedDispatcher, In(Unit.Bytes)) / f.Median(Unbounded, In(Unit.Bytes)) * 100, 5),
        Target.AtLeast(Metric.TimesBetter("capped dispatcher's throughput vs unbounded", CappedDispatcher, Unbounded, In(Unit.OpsPerSecond)), 0.9),
    ];

    private static Func<Measurement, bool> In(Unit unit) => m => m.Unit == unit;
    /// <inheritdoc/>
    public override Headline Headline => new(
        new Metric("DedicatedThreadDispatcher capped at 10,000: peak queue memory, share of an unbounded BlockingCollection's (lower is better)", Unit.Percent,
            f => f.Median(CappedDispatcher, In(Unit.Bytes)) / f.Median(Unbounded, In(Unit.Bytes)) * 100),
        Metric.TimesBetter("its throughput vs the unbounded queue (1x = as fast)", CappedDispatcher, Unbounded, In(Unit.OpsPerSecond)),
        Metric.TimesBetter("its throughput vs a capped BlockingCollection", CappedDispatcher, CappedBlocking, In(Unit.OpsPerSecond)));

    private static int Items(RunSettings s) => s.IsSmoke ? 30_000 : s.IsQuick ? 300_000 : 3_000_000;

    /// <inheritdoc/>
    public override IReadOnlyList<ParameterSpec> DescribeParameters(RunSettings settings) =>
    [
        new("items", "requests produced per run, each a closure over a new 256-byte payload", [Items(settings).ToString(System.Globalization.CultureInfo.InvariantCulture)]),
        new("cap", "queue bound of the capped variants", [Cap.ToString(System.Globalization.CultureInfo.InvariantCulture)]),
    ];

    /// <inheritdoc/>
    public override void Run(ExperimentContext context)
    {
        int items = Items(context.Settings);
        int runCount = context.IsSmoke ? 1 : context.IsQuick ? 2 : 5;
        var payloadProbe = new byte[PayloadBytes];
        (s_sendSpin, double sendMicros) = Pilot.Spins(spins => Send(payloadProbe, spins), TimeSpan.FromMicroseconds(SendMicros), startSpins: s_sendSpin);
        var runs = Scenarios.Run<(TimeSpan Elapsed, long PeakBytes, long Backlog)>(context,
        [
            (Unbounded, n => Run(() => StartBlockingCollection(null), n)),
            (CappedBlocking, n => Run(() => StartBlockingCollection(Cap), n)),
            (CappedDispatcher, n => Run(StartDispatcher, n)),
        ], items, warmUpSize: Math.Min(items, 20_000), rounds: runCount);
        var p = Parameters.Of(("items", items), ("cap", Cap));
        foreach (var (name, taken) in runs)
        {
            // The run's own time excludes its memory probe (a blocking full collection): see Run.
            context.RecordSamples(name, "ops/s", [.. taken.Select(r => items / r.Result.Elapsed.TotalSeconds)], p, lowerIsBetter: false, threads: 2);
            // The backlog beside the bytes: the unbounded queue's peak is what the consumer had not taken yet, so a figure
            // that moved between runs shows here whether the queue's depth moved (the producer's pace against the consumer's).
            context.RecordSamples(name, "bytes", [.. taken.Select(r => (double)r.Result.PeakBytes)], p, lowerIsBetter: true, threads: 2,
                metrics: new Dictionary<string, double> { ["backlogItems"] = Statistics.From([.. taken.Select(r => (double)r.Result.Backlog)]).Median });
        }
        context.Note($"One producer creates {items:N0} requests (a closure over a new {PayloadBytes}-byte array) as fast as it can; one consumer 'sends' each (checksum plus a spin, measured at {sendMicros:0.##} µs per request). Throughput: requests consumed per second from the first post to the last send.");
        context.Note("Memory: live managed bytes when the producer posts its last request (a full collection at that moment, its pause excluded from the time), minus those before the run: the queue at its deepest, not garbage awaiting collection. "
            + "Beside it, metrics.backlogItems: the requests not yet consumed at that moment (the median run's), the depth the bytes follow.");
    }

    /// <summary>The slow consumer's work: read the payload and wait for the "socket".</summary>
    private static void Send(byte[] payload) => Send(payload, s_sendSpin);

    private static void Send(byte[] payload, int spins)
    {
        s_checksum += payload[0] + payload[^1];
        s_sent++; // the consumer's thread alone writes it; read once the producer's probe has stopped every thread
        Thread.SpinWait(spins);
    }

    private static (Action<Action>, Action) StartBlockingCollection(int? cap)
    {
        var queue = cap is int c ? new BlockingCollection<Action>(c) : new BlockingCollection<Action>();
        var consumer = LabThreads.Start(1, _ => { foreach (var item in queue.GetConsumingEnumerable()) item(); }, "lab-consumer")[0];
        return (queue.Add, () => { queue.CompleteAdding(); consumer.Join(); queue.Dispose(); });
    }

    private static (Action<Action>, Action) StartDispatcher()
    {
        var dispatcher = new DedicatedThreadDispatcher(new DispatcherOptions { Name = "lab-bounded", ThreadCount = 1, Capacity = Cap });
        return (dispatcher.Post, () => dispatcher.Shutdown(Timeout.InfiniteTimeSpan));
    }

    /// <summary>
    /// One run; returns the time from the first post to the last send, excluding the memory probe.
    /// The probe is a full collection at the producer's last post: the queue is at its deepest
    /// then (unbounded: the whole backlog; capped: at most the cap), and after a full collection
    /// the heap holds only live objects, so the reading is the queue's memory, not garbage waiting
    /// for a collection (which sampling the heap would mix in, by up to a gen-0 budget).
    /// </summary>
    private static (TimeSpan Elapsed, long PeakBytes, long Backlog) Run(Func<(Action<Action> Post, Action Finish)> start, int items)
    {
        GC.Collect();
        GC.WaitForPendingFinalizers();
        long baseline = GC.GetTotalMemory(forceFullCollection: true);
        var (post, finish) = start();
        long sentBefore = Volatile.Read(ref s_sent);
        long begin = LabClock.Now;
        for (int i = 0; i < items; i++)
        {
            var payload = new byte[PayloadBytes];
            payload[0] = (byte)i;
            post(() => Send(payload));
        }
        long backlog = items - (Volatile.Read(ref s_sent) - sentBefore); // at the last post, as the probe below weighs it
        var probe = LabClock.Time(() =>
        {
            GC.Collect(); // blocking: the consumer is paused too, so excluding this time is exact
            return GC.GetTotalMemory(forceFullCollection: false);
        }, out long live);
        finish();
        return (LabClock.Since(begin) - probe, Math.Max(0, live - baseline), Math.Max(0, backlog));
    }
}
