using System.Collections.Concurrent;
using System.Diagnostics;
using System.Threading.Channels;
using Manaloc.Lab.Harness;
using Manaloc.Threading;

namespace Manaloc.Lab.Experiments;

/// <summary>The worker loops, the floods and the heartbeat probe.</summary>
public sealed partial class Dispatcher
{
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

    private static Thread[] StartWorkers(Action loop)
    {
        var threads = new Thread[Workers];
        for (int i = 0; i < threads.Length; i++)
        {
            threads[i] = new Thread(() => loop()) { IsBackground = true, Name = $"lab-worker-{i}" };
            threads[i].Start();
        }
        return threads;
    }

    /// <summary>Releases the producers together; returns the time until the last item ran (complete + join).</summary>
    private static TimeSpan Flood(int items, Action post, Action complete, Thread[] workers)
    {
        int perProducer = items / Producers;
        using var go = new ManualResetEventSlim();
        var producers = new Thread[Producers];
        for (int i = 0; i < producers.Length; i++)
        {
            producers[i] = new Thread(() =>
            {
                go.Wait();
                for (int n = 0; n < perProducer; n++) post();
            }) { IsBackground = true, Name = $"lab-producer-{i}" };
            producers[i].Start();
        }
        long start = Stopwatch.GetTimestamp();
        go.Set();
        foreach (var t in producers) t.Join();
        complete();
        foreach (var t in workers) t.Join();
        return Stopwatch.GetElapsedTime(start);
    }

    private enum FloodKind { None, ThreadPool, Dispatcher }

    private static int s_floodSpin = 30;
    private static readonly Action s_floodWork = static () => Thread.SpinWait(s_floodSpin);

    /// <summary>Sets the flood item's spin so that one item costs about one microsecond here; returns its measured cost in µs.</summary>
    private static double CalibrateFloodWork()
    {
        const int Probe = 20_000;
        for (int attempt = 0; attempt < 6; attempt++)
        {
            long start = Stopwatch.GetTimestamp();
            for (int i = 0; i < Probe; i++) s_floodWork();
            double us = Stopwatch.GetElapsedTime(start).TotalMicroseconds / Probe;
            if (us is > 0.7 and < 1.5) return us;
            s_floodSpin = Math.Clamp((int)(s_floodSpin / Math.Max(us, 0.01)), 1, 100_000);
        }
        long s = Stopwatch.GetTimestamp();
        for (int i = 0; i < Probe; i++) s_floodWork();
        return Stopwatch.GetElapsedTime(s).TotalMicroseconds / Probe;
    }

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
        public void Execute() => latencies[index] = Stopwatch.GetElapsedTime(queuedAt).TotalMilliseconds;
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
        var producers = new Thread[flood == FloodKind.None ? 0 : Producers];
        for (int i = 0; i < producers.Length; i++)
        {
            // The same producers in both variants: post as fast as the sink takes items; both sinks
            // block a producer on a full bound and let it go again at the same resume mark.
            producers[i] = new Thread(() =>
            {
                long mine = 0;
                while (!stop.IsCancellationRequested)
                {
                    try { post(); } catch (InvalidOperationException) { break; }
                    mine++;
                }
                Interlocked.Add(ref posted, mine);
            }) { IsBackground = true, Name = $"lab-flood-{i}" };
            producers[i].Start();
        }
        Thread.Sleep(50); // let the flood build up
        var latencies = new double[(int)(duration.TotalMilliseconds * 2) + 16];
        int beats = 0;
        using var process = Process.GetCurrentProcess();
        var cpuBefore = process.TotalProcessorTime;
        long start = Stopwatch.GetTimestamp();
        var until = start + (long)(duration.TotalSeconds * Stopwatch.Frequency);
        while (Stopwatch.GetTimestamp() < until && beats < latencies.Length)
        {
            latencies[beats] = double.NaN;
            ThreadPool.UnsafeQueueUserWorkItem(new Beat(latencies, beats, Stopwatch.GetTimestamp()), preferLocal: false);
            beats++;
            Thread.Sleep(1);
        }
        process.Refresh();
        cpuCores = (process.TotalProcessorTime - cpuBefore).TotalSeconds / Stopwatch.GetElapsedTime(start).TotalSeconds;
        stop.Cancel();
        foreach (var t in producers) t.Join();
        dispatcher?.Shutdown(Timeout.InfiniteTimeSpan);
        var deadline = Stopwatch.GetTimestamp() + 30 * Stopwatch.Frequency;
        while ((pool.Outstanding > 0 || latencies.Take(beats).Any(double.IsNaN)) && Stopwatch.GetTimestamp() < deadline)
        {
            Thread.Sleep(1);
        }
        flooded = Interlocked.Read(ref posted);
        return latencies.Take(beats).Where(double.IsFinite).ToList();
    }
}
