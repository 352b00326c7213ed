using BenchmarkDotNet.Attributes;
using Manaloc.Platform;

namespace Manaloc.Benchmarks;

/// <summary>
/// What asking "how many processors?" costs: the runtime's cached count (anchor), a fresh
/// Processors reading (system calls and file reads), and the cached Processors.Current.
/// </summary>
[MemoryDiagnoser]
public class ProcessorsBenchmarks
{
    /// <summary>Anchor: fixed at start-up.</summary>
    [Benchmark(Baseline = true)]
    public int EnvironmentProcessorCount() => Environment.ProcessorCount;

    /// <summary>A fresh reading: affinity, cgroup files, cache line size.</summary>
    [Benchmark]
    public int ProcessorsRead() => Processors.Read().AvailableCount;

    /// <summary>The reading shared by Manaloc's components.</summary>
    [Benchmark]
    public int ProcessorsCurrent() => Processors.Current.AvailableCount;
}
