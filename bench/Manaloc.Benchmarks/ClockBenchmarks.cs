using System.Diagnostics;
using BenchmarkDotNet.Attributes;
using Manaloc.Time;

namespace Manaloc.Benchmarks;

/// <summary>Reading the time: the runtime's ways beside Manaloc's Clock. Anchor: DateTime.UtcNow.</summary>
[MemoryDiagnoser]
public class ClockBenchmarks
{
    /// <summary>Anchor.</summary>
    [Benchmark(Baseline = true)]
    public long DateTimeUtcNow() => DateTime.UtcNow.Ticks;

    /// <summary>Local time (the article's subject).</summary>
    [Benchmark]
    public long DateTimeNow() => DateTime.Now.Ticks;

    /// <summary>The performance counter.</summary>
    [Benchmark]
    public long StopwatchTimestamp() => Stopwatch.GetTimestamp();

    /// <summary>Manaloc's monotonic timestamp.</summary>
    [Benchmark]
    public long ClockTimestamp() => Clock.GetTimestamp();

    /// <summary>Manaloc's wall clock in Unix nanoseconds.</summary>
    [Benchmark]
    public long ClockUnixNanoseconds() => Clock.UtcNowUnixNanoseconds();
}
