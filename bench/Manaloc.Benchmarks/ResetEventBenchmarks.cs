using BenchmarkDotNet.Attributes;
using Manaloc.Threading;

namespace Manaloc.Benchmarks;

/// <summary>Set then Wait on one thread (the seed's loop): the runtime's events beside EconomicResetEvent. Anchor: SemaphoreSlim.</summary>
[MemoryDiagnoser]
public class ResetEventBenchmarks
{
    private readonly AutoResetEvent _auto = new(false);
    private readonly ManualResetEventSlim _manualSlim = new(false);
    private readonly SemaphoreSlim _semaphore = new(0);
    private readonly EconomicResetEvent _economic = new();

    /// <summary>Releases the events.</summary>
    [GlobalCleanup]
    public void Cleanup()
    {
        _auto.Dispose();
        _manualSlim.Dispose();
        _semaphore.Dispose();
        _economic.Dispose();
    }

    /// <summary>Anchor: Release then Wait.</summary>
    [Benchmark(Baseline = true)]
    public void SemaphoreSlimReleaseWait()
    {
        _semaphore.Release();
        _semaphore.Wait();
    }

    /// <summary>The article's subject: a kernel transition per call.</summary>
    [Benchmark]
    public void AutoResetEventSetWait()
    {
        _auto.Set();
        _auto.WaitOne();
    }

    /// <summary>Set, Wait and Reset on the slim manual event.</summary>
    [Benchmark]
    public void ManualResetEventSlimSetWaitReset()
    {
        _manualSlim.Set();
        _manualSlim.Wait();
        _manualSlim.Reset();
    }

    /// <summary>Ours: one CAS each.</summary>
    [Benchmark]
    public void EconomicResetEventSetWait()
    {
        _economic.Set();
        _economic.Wait();
    }

    /// <summary>Ours: a redundant Set (already set) costs one CAS too.</summary>
    [Benchmark]
    public void EconomicResetEventRedundantSet()
    {
        _economic.Set();
        _economic.Set();
        _economic.Wait();
    }
}
