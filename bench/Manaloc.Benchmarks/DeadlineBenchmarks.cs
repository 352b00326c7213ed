using BenchmarkDotNet.Attributes;
using Manaloc.Threading;

namespace Manaloc.Benchmarks;

/// <summary>Polling a deadline an hour away, and creating one. Anchor: a DateTime.UtcNow deadline.</summary>
[MemoryDiagnoser]
public class DeadlineBenchmarks
{
    private static readonly TimeSpan Timeout = TimeSpan.FromHours(1);
    private DateTime _due;
    private Deadline _deadline;
    private ScheduledValue<bool> _scheduled = null!;

    /// <summary>Creates one of each.</summary>
    [GlobalSetup]
    public void Setup()
    {
        _due = DateTime.UtcNow + Timeout;
        _deadline = Deadline.After(Timeout);
        _scheduled = new ScheduledValue<bool>(false, true, Timeout);
    }

    /// <summary>Stops the timer.</summary>
    [GlobalCleanup]
    public void Cleanup() => _scheduled.Dispose();

    /// <summary>Anchor: compare with DateTime.UtcNow.</summary>
    [Benchmark(Baseline = true)]
    public bool PollUtcNow() => DateTime.UtcNow >= _due;

    /// <summary>Deadline.IsExpired: one monotonic clock read.</summary>
    [Benchmark]
    public bool PollDeadline() => _deadline.IsExpired;

    /// <summary>ScheduledValue.Value: one volatile read.</summary>
    [Benchmark]
    public bool PollScheduledValue() => _scheduled.Value;

    /// <summary>Creating a Deadline.</summary>
    [Benchmark]
    public Deadline CreateDeadline() => Deadline.After(Timeout);

    /// <summary>Creating and disposing a ScheduledValue (a timer).</summary>
    [Benchmark]
    public bool CreateScheduledValue()
    {
        using var value = new ScheduledValue<bool>(false, true, Timeout);
        return value.Value;
    }
}
