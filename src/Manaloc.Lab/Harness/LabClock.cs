using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Manaloc.Lab.Harness;

/// <summary>
/// The harness's clock, the one place the lab reads time. The harness's own loops (<see cref="Bench"/>,
/// <see cref="ThreadSweep"/>, <see cref="Pilot"/>, <see cref="LabThreads.RunTogether"/>) time what they run; an experiment that needs a figure those
/// loops cannot give — one operation's latency, a wall-clock phase, a time budget for its rounds, a trace of
/// timestamps — takes it from here, so every figure in the lab comes from one monotonic clock and one set of
/// conversions.
/// </summary>
/// <remarks>
/// Timestamps are the high-resolution monotonic clock's raw ticks (<see cref="Frequency"/> per second), cheap
/// enough to read in a spin loop. Thread-safe: every member is a pure read of the clock.
/// </remarks>
public static class LabClock
{
    /// <summary>Ticks per second of <see cref="Now"/>.</summary>
    public static long Frequency => Stopwatch.Frequency;

    /// <summary>The current timestamp, in ticks of <see cref="Frequency"/>.</summary>
    public static long Now
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => Stopwatch.GetTimestamp();
    }

    /// <summary>The time since <paramref name="start"/>, a timestamp from <see cref="Now"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static TimeSpan Since(long start) => Stopwatch.GetElapsedTime(start);

    /// <summary>The time from <paramref name="start"/> to <paramref name="end"/>, two timestamps from <see cref="Now"/>.</summary>
    public static TimeSpan Between(long start, long end) => Stopwatch.GetElapsedTime(start, end);

    /// <summary><paramref name="span"/> in ticks of <see cref="Frequency"/> (to add to a timestamp).</summary>
    public static long Ticks(TimeSpan span) => (long)(span.TotalSeconds * Frequency);

    /// <summary>A tick count of <see cref="Frequency"/> (a difference of two timestamps) in milliseconds.</summary>
    public static double Milliseconds(long ticks) => ticks * 1000.0 / Frequency;

    /// <summary>Times one call of <paramref name="action"/> on the calling thread.</summary>
    public static TimeSpan Time(Action action)
    {
        ArgumentNullException.ThrowIfNull(action);
        long start = Now;
        action();
        return Since(start);
    }

    /// <summary>Times one call of <paramref name="function"/> on the calling thread, handing back its result.</summary>
    public static TimeSpan Time<T>(Func<T> function, out T result)
    {
        ArgumentNullException.ThrowIfNull(function);
        long start = Now;
        result = function();
        return Since(start);
    }

    /// <summary>Starts a <see cref="TimeBudget"/> of <paramref name="limit"/> now.</summary>
    public static TimeBudget Budget(TimeSpan limit) => new(Now, limit);
}

/// <summary>
/// A span of time started at a timestamp of <see cref="LabClock"/>: how long it has run and whether its limit has
/// passed. Bounds an experiment's rounds, waits and drains, so no loop of the lab runs unbounded.
/// </summary>
/// <remarks>An immutable value: copies share the start; thread-safe.</remarks>
public readonly struct TimeBudget
{
    internal TimeBudget(long start, TimeSpan limit)
    {
        Start = start;
        Limit = limit;
    }

    /// <summary>The timestamp (of <see cref="LabClock.Now"/>) the budget started at.</summary>
    public long Start { get; }

    /// <summary>How long the budget runs.</summary>
    public TimeSpan Limit { get; }

    /// <summary>The time since the start.</summary>
    public TimeSpan Elapsed => LabClock.Since(Start);

    /// <summary>True once <see cref="Limit"/> has passed since the start.</summary>
    public bool IsSpent => Elapsed >= Limit;
}
