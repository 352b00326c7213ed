using System.Collections.Concurrent;
using BenchmarkDotNet.Attributes;
using Manaloc.Threading;

namespace Manaloc.Benchmarks;

/// <summary>
/// Posting a batch of tiny items and waiting until they have all run: dedicated workers over a
/// bounded BlockingCollection (anchor, seed 002's design) beside DedicatedThreadDispatcher, same
/// capacity and worker count. One operation = one item.
/// </summary>
[MemoryDiagnoser]
public class DispatcherBenchmarks
{
    private const int Batch = 100_000;
    private const int Capacity = 10_000;
    private static readonly Action s_tiny = static () => Interlocked.Increment(ref s_done);
    private static long s_done;

    private BlockingCollection<Action> _queue = null!;
    private Thread[] _workers = [];
    private DedicatedThreadDispatcher _dispatcher = null!;

    /// <summary>Worker threads.</summary>
    [Params(1, 2)]
    public int Workers { get; set; }

    /// <summary>Starts both sets of workers.</summary>
    [GlobalSetup]
    public void Setup()
    {
        _queue = new BlockingCollection<Action>(Capacity);
        _workers = Enumerable.Range(0, Workers).Select(_ => new Thread(() => { foreach (var a in _queue.GetConsumingEnumerable()) a(); }) { IsBackground = true }).ToArray();
        foreach (var t in _workers) t.Start();
        _dispatcher = new DedicatedThreadDispatcher(new DispatcherOptions { Name = "bench", ThreadCount = Workers, Capacity = Capacity });
    }

    /// <summary>Stops both.</summary>
    [GlobalCleanup]
    public void Cleanup()
    {
        _queue.CompleteAdding();
        foreach (var t in _workers) t.Join();
        _dispatcher.Dispose();
    }

    /// <summary>Anchor: BlockingCollection workers.</summary>
    [Benchmark(Baseline = true, OperationsPerInvoke = Batch)]
    public void BlockingCollection() => PostAndWait(_queue.Add);

    /// <summary>DedicatedThreadDispatcher.</summary>
    [Benchmark(OperationsPerInvoke = Batch)]
    public void Dispatcher() => PostAndWait(_dispatcher.Post);

    private static void PostAndWait(Action<Action> post)
    {
        long target = Interlocked.Read(ref s_done) + Batch;
        for (int i = 0; i < Batch; i++) post(s_tiny);
        var spin = new SpinWait();
        while (Interlocked.Read(ref s_done) < target) spin.SpinOnce();
    }
}
