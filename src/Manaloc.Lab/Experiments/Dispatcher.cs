using System.Collections.Concurrent;
using System.Threading.Channels;
using Manaloc.Threading;

namespace Manaloc.Lab.Experiments;

/// <summary>
/// Seed 002, "Tradeoffs in High Performance Software", tradeoff #1: a flood of tiny work items on
/// dedicated threads instead of the shared thread pool. Two parts: (1) throughput of producers
/// flooding tiny items into workers over a BlockingCollection (the article's design), a bounded
/// Channel, and the DedicatedThreadDispatcher, all with the same capacity; (2) the latency of a
/// heartbeat of other work on the thread pool while a flood runs on the pool, on the dispatcher,
/// or not at all.
/// </summary>
public sealed class Dispatcher() : Experiment(
    "dispatcher", "Tradeoffs in High Performance Software (seed 002)",
    "Tiny-item throughput of dedicated workers (BlockingCollection, Channel, DedicatedThreadDispatcher) and heartbeat latency with a flood on the ThreadPool vs on the dispatcher.",
    [Blocking, ChannelWorkers, Ours, NoFlood, FloodOnPool, FloodOnDispatcher], Blocking, quickSeconds: 6, quickLaunches: 2)
{
    private const int Capacity = 10_000;
    private const string Blocking = "BlockingCollection workers";
    private const string ChannelWorkers = "Channel workers";
    private const string Ours = "DedicatedThreadDispatcher";
    private const string FloodOnPool = "heartbeat, flood on ThreadPool";
    private const string FloodOnDispatcher = "heartbeat, flood on dispatcher";
    private const string NoFlood = "heartbeat, no flood";

    [ThreadStatic]
    private static long t_sink;
    private static readonly Action s_tiny = static () => t_sink++;

    /// <inheritdoc/>
    public override Claim Claim => new(
        "A connection's flood of requests on the shared ThreadPool starves the rest of the application; on a handful of dedicated threads it does not (no figure given).", null,
        Metric.TimesBetter("heartbeat latency under the flood: dispatcher vs ThreadPool (medians)", FloodOnDispatcher, FloodOnPool));
    /// <inheritdoc/>
    public override IReadOnlyList<Target> Targets =>
    [
        Target.AtLeast("heartbeat p99 under the flood: ThreadPool flood / dispatcher flood", Unit.Ratio,
            f => f.Find(FloodOnPool) is { } pool && f.Find(FloodOnDispatcher) is { } ours ? f.Percentile(pool, 0.99) / Math.Max(f.Percentile(ours, 0.99) ?? double.NaN, 1e-6) : null, 10),
        Target.AtLeast(Metric.TimesBetter("tiny-item throughput vs BlockingCollection workers", Ours, Blocking, m => m.Unit == Unit.OpsPerSecond), 2),
        Target.AtLeast(Metric.TimesBetter("CPU per tiny item vs BlockingCollection workers", Ours, Blocking, m => m.Unit == "CPU ns/item"), 1),
    ];
    /// <inheritdoc/>
    public override Headline Headline => new(
        Metric.TimesBetter("DedicatedThreadDispatcher vs BlockingCollection workers, tiny-item throughput (times as fast)", Ours, Blocking, m => m.Unit == Unit.OpsPerSecond),
        Metric.TimesBetter("vs Channel workers", Ours, ChannelWorkers, m => m.Unit == Unit.OpsPerSecond),
        Metric.TimesBetter("heartbeat latency under a flood: flood on the dispatcher vs on the ThreadPool (times as fast)", FloodOnDispatcher, FloodOnPool));

    private static int Workers => Math.Max(2, Environment.ProcessorCount);
    private static int Producers => Math.Max(2, Environment.ProcessorCount);
    /// <summary>The flood's dispatcher leaves one core to the rest of the application: the isolation seed 002 wanted.</summary>
    private static int FloodWorkers => Math.Max(1, Environment.ProcessorCount - 1);

    /// <summary>Items per throughput run: in quick mode half a million, a few tenths of a second for the slowest workers (the launches, not longer runs, give the interval).</summary>
    private static int Items(RunSettings s) => s.IsSmoke ? 20_000 : s.IsQuick ? 500_000 : 10_000_000;
    /// <summary>A heartbeat run: in quick mode half a second, about 450 beats a launch, so the launches' beats pool far beyond the 100 a p99 needs.</summary>
    private static TimeSpan HeartbeatRun(RunSettings s) => TimeSpan.FromMilliseconds(s.IsSmoke ? 120 : s.IsQuick ? 500 : 5000);

    /// <inheritdoc/>
    public override IReadOnlyList<ParameterSpec> DescribeParameters(RunSettings settings) =>
    [
        new("items", "tiny items (one thread-static increment) flooded per throughput sample", [Items(settings).ToString(System.Globalization.CultureInfo.InvariantCulture)]),
        new("producers", "threads posting items", [Producers.ToString(System.Globalization.CultureInfo.InvariantCulture)]),
        new("workers", "dedicated worker threads", [Workers.ToString(System.Globalization.CultureInfo.InvariantCulture)]),
        new("capacity", "queue bound of every variant (and the ThreadPool flood's outstanding cap)", [Capacity.ToString(System.Globalization.CultureInfo.InvariantCulture)]),
    ];

    /// <inheritdoc/>
    public override void Run(ExperimentContext context)
    {
        int items = Items(context.Settings);
        int samples = context.IsSmoke ? 1 : context.IsQuick ? 3 : 7;
        var p = Parameters.Of(("items", items), ("producers", Producers), ("workers", Workers), ("capacity", Capacity));
        var runs = Scenarios.Run<TimeSpan>(context,
        [
            (Blocking, n => RunBlockingCollection(n)),
            (ChannelWorkers, n => RunChannel(n)),
            (Ours, n => RunDispatcher(n)),
        ], items, warmUpSize: Math.Min(items, 50_000), rounds: samples);
        foreach (var (variant, taken) in runs)
        {
            // Throughput from the flood's own time (release to every worker joined); CPU from the harness's account of the run.
            context.RecordSamples(variant, "ops/s", [.. taken.Select(r => items / r.Result.TotalSeconds)], p, lowerIsBetter: false, threads: Producers + Workers);
            context.RecordSamples(variant, "CPU ns/item", [.. taken.Select(r => r.Cpu.TotalNanoseconds / items)], p, lowerIsBetter: true, threads: Producers + Workers);
        }

        var duration = HeartbeatRun(context.Settings);
        (s_floodSpin, double floodMicros) = Pilot.Spins(static spins => Thread.SpinWait(spins), TimeSpan.FromMicroseconds(1), startSpins: s_floodSpin);
        var hp = Parameters.Of(("flood work", "~1 µs per item"), ("interval", "1 ms"), ("capacity", Capacity), ("flood workers", FloodWorkers));
        var floodRates = new List<string>();
        var cpuUse = new List<string>();
        foreach (var (variant, flood) in new[] { (NoFlood, FloodKind.None), (FloodOnPool, FloodKind.ThreadPool), (FloodOnDispatcher, FloodKind.Dispatcher) })
        {
            context.Status(variant);
            var latencies = Heartbeat(flood, duration, out long flooded, out double cpuCores);
            context.RecordSamples(variant, "ms", latencies, hp, lowerIsBetter: true, threads: Producers,
                metrics: new Dictionary<string, double> { ["heartbeats"] = latencies.Count, ["flood items"] = flooded, ["CPU cores"] = cpuCores });
            cpuUse.Add($"{variant}: {cpuCores:0.00}");
            if (flood != FloodKind.None) floodRates.Add($"{variant}: {Format.Value(flooded / duration.TotalSeconds, "ops/s")}");
        }
        context.Note($"Flood items accepted per second during the heartbeat runs (the price of isolation is the flood's own throughput): {string.Join("; ", floodRates)}. Process CPU during the heartbeat runs, in cores: {string.Join("; ", cpuUse)}.");
        context.Note($"Throughput: {Producers} producers flood {items:N0} tiny items into {Workers} workers through a queue bounded at {Capacity:N0}; time runs from release to every worker joined. 'CPU ns/item' is the process's CPU time per item over the same run: less sensitive than wall time to other load on the machine.");
        context.Note($"Heartbeat: every ~1 ms a small item goes to the ThreadPool; its latency is queue-to-run. The flood ({Producers} producers of items measured at {floodMicros:0.##} µs each) runs for {duration.TotalSeconds:0.##} s on the ThreadPool (all its threads) or on a {FloodWorkers}-thread dispatcher (processors − 1, leaving a core to the rest of the application, as the article's handful of dedicated threads did). The producers are the same in both: each posts as fast as its sink accepts, at most {Capacity:N0} items are outstanding, and a producer that finds the bound full blocks until 1/16 of it is free (the dispatcher's Block mode; the ThreadPool variant mirrors it with a counter and a monitor).");
    }

    // The worker loops, the floods and the heartbeat probe.
    private static TimeSpan RunBlockingCollection(int items)
    {
        using var queue = new BlockingCollection<Action>(Capacity);
        var workers = StartWorkers(() => { foreach (var item in queue.GetConsumingEnumerable()) item(); });
        return Flood(items, () => queue.Add(s_tiny), () => queue.CompleteAdding(), workers);
    }

    private static TimeSpan RunChannel(int items)
    {
        var channel = Channel.CreateBounded<Action>(new BoundedChannelOptions(Capacity) { FullMode = BoundedChannelFullMode.Wait });
        var reader = channel.Reader;
        var writer = channel.Writer;
        var workers = StartWorkers(() =>
        {
            while (true)
            {
                while (reader.TryRead(out var item)) item();
                if (!reader.WaitToReadAsync().AsTask().GetAwaiter().GetResult()) return;
            }
        });
        return Flood(items, () => { if (!writer.TryWrite(s_tiny)) writer.WriteAsync(s_tiny).AsTask().GetAwaiter().GetResult(); }, () => writer.Complete(), workers);
    }

    private static TimeSpan RunDispatcher(int items)
    {
        var dispatcher = new DedicatedThreadDispatcher(new DispatcherOptions { Name = "lab-dispatcher", ThreadCount = Workers, Capacity = Capacity });
        return Flood(items, () => dispatcher.Post(s_tiny), () => dispatcher.Shutdown(Timeout.InfiniteTimeSpan), []);
    }

    private static Thread[] StartWorkers(Action loop) => LabThreads.Start(Workers, _ => loop(), "lab-worker");

    /// <summary>Releases the producers together; returns the time until the last item ran (complete + join).</summary>
    private static TimeSpan Flood(int items, Action post, Action complete, Thread[] workers)
    {
        int perProducer = items / Producers;
        return LabThreads.RunTogether(Producers, _ => { for (int n = 0; n < perProducer; n++) post(); }, then: () =>
        {
            complete();
            foreach (var t in workers) t.Join();
        }, name: "lab-producer");
    }

    private enum FloodKind { None, ThreadPool, Dispatcher }

    /// <summary>The flood item's spin, sized by the harness (<see cref="Pilot.Spins"/>) so that one item costs about a microsecond here.</summary>
    private static int s_floodSpin = 30;
    private static readonly Action s_floodWork = static () => Thread.SpinWait(s_floodSpin);

    /// <summary>
    /// The flood on the ThreadPool, bounded like the dispatcher's queue in Block mode so that the
    /// producers are the same in both variants: at most <see cref="Capacity"/> items outstanding; a
    /// producer that finds them all out blocks until the pool has worked the backlog down to the
    /// dispatcher's resume mark (1/16 free), re-checking every millisecond. (Yield-spinning instead
    /// would burn the cores the pool's threads need and make the ThreadPool variant look worse
    /// than it is.) One instance per run; it is also the work item, queued once per item.
    /// </summary>
    private sealed class PoolFlood : IThreadPoolWorkItem
    {
        private static readonly int ResumeMark = Capacity - Math.Max(1, Capacity / 16);
        private readonly object _gate = new();
        private int _outstanding;
        private int _waiting;

        public int Outstanding => Volatile.Read(ref _outstanding); // a snapshot, for the end-of-run drain

        public void Post()
        {
            if (Volatile.Read(ref _outstanding) >= Capacity) WaitForRoom(); // a hint: two producers may overshoot the cap by one each
            Interlocked.Increment(ref _outstanding); // full fence; pairs with Execute's decrement
            ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
        }

        private void WaitForRoom()
        {
            lock (_gate)
            {
                Interlocked.Increment(ref _waiting); // full fence: before the re-check of _outstanding (Dekker with Execute)
                while (Volatile.Read(ref _outstanding) > ResumeMark) Monitor.Wait(_gate, 1);
                Interlocked.Decrement(ref _waiting);
            }
        }

        public void Execute()
        {
            s_floodWork();
            // Full fence: the decrement before the read of _waiting (Dekker with WaitForRoom).
            if (Interlocked.Decrement(ref _outstanding) <= ResumeMark && Volatile.Read(ref _waiting) != 0)
            {
                lock (_gate) Monitor.PulseAll(_gate);
            }
        }
    }

    private sealed class Beat(double[] latencies, int index, long queuedAt) : IThreadPoolWorkItem
    {
        public void Execute() => latencies[index] = LabClock.Since(queuedAt).TotalMilliseconds;
    }

    private static List<double> Heartbeat(FloodKind flood, TimeSpan duration, out long flooded, out double cpuCores)
    {
        using var stop = new CancellationTokenSource();
        var dispatcher = flood == FloodKind.Dispatcher
            ? new DedicatedThreadDispatcher(new DispatcherOptions { Name = "lab-flood", ThreadCount = FloodWorkers, Capacity = Capacity })
            : null;
        var pool = new PoolFlood();
        Action post = dispatcher is not null ? () => dispatcher.Post(s_floodWork) : pool.Post;
        long posted = 0;
        // The same producers in both variants: post as fast as the sink takes items; both sinks
        // block a producer on a full bound and let it go again at the same resume mark.
        var producers = LabThreads.Start(flood == FloodKind.None ? 0 : Producers, _ =>
        {
            long mine = 0;
            while (!stop.IsCancellationRequested)
            {
                try { post(); } catch (InvalidOperationException) { break; }
                mine++;
            }
            Interlocked.Add(ref posted, mine);
        }, "lab-flood");
        Thread.Sleep(50); // let the flood build up
        var latencies = new double[(int)(duration.TotalMilliseconds * 2) + 16];
        int beats = 0;
        var cpu = ProcessCpu.StartNow();
        var beating = LabClock.Budget(duration);
        while (!beating.IsSpent && beats < latencies.Length)
        {
            latencies[beats] = double.NaN;
            ThreadPool.UnsafeQueueUserWorkItem(new Beat(latencies, beats, LabClock.Now), preferLocal: false);
            beats++;
            Thread.Sleep(1);
        }
        cpuCores = cpu.Cores;
        stop.Cancel();
        foreach (var t in producers) t.Join();
        dispatcher?.Shutdown(Timeout.InfiniteTimeSpan);
        var drain = LabClock.Budget(TimeSpan.FromSeconds(30));
        while ((pool.Outstanding > 0 || latencies.Take(beats).Any(double.IsNaN)) && !drain.IsSpent)
        {
            Thread.Sleep(1);
        }
        flooded = Interlocked.Read(ref posted);
        return latencies.Take(beats).Where(double.IsFinite).ToList();
    }
}
