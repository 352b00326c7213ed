using BenchmarkDotNet.Attributes;
using Manaloc.Threading;

namespace Manaloc.Benchmarks;

/// <summary>
/// Every thread incrementing one counter: a shared Interlocked field (anchor) beside
/// StripedCounter. One operation = one increment on each thread (the threads run at once).
/// </summary>
[MemoryDiagnoser]
public class StripedCounterBenchmarks
{
    private const int PerThread = 1_000_000;
    private long _shared;
    private StripedCounter _striped = null!;

    /// <summary>Threads incrementing at once.</summary>
    [Params(1, 2)]
    public int Threads { get; set; }

    /// <summary>Creates the counter.</summary>
    [GlobalSetup]
    public void Setup() => _striped = new StripedCounter();

    /// <summary>Anchor: Interlocked.Increment on one shared field.</summary>
    [Benchmark(Baseline = true, OperationsPerInvoke = PerThread)]
    public void SharedInterlocked() => RunThreads(() => { for (int i = 0; i < PerThread; i++) Interlocked.Increment(ref _shared); });

    /// <summary>StripedCounter.Increment.</summary>
    [Benchmark(OperationsPerInvoke = PerThread)]
    public void Striped() => RunThreads(() => { for (int i = 0; i < PerThread; i++) _striped.Increment(); });

    /// <summary>Reading the striped sum.</summary>
    [Benchmark]
    public long StripedSum() => _striped.Sum();

    private void RunThreads(Action body)
    {
        var threads = Enumerable.Range(0, Threads).Select(_ => new Thread(() => body())).ToArray();
        foreach (var t in threads) t.Start();
        foreach (var t in threads) t.Join();
    }
}
