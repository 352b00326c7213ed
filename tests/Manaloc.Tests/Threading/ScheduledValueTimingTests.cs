using System.Diagnostics;
using Manaloc.Threading;
using Microsoft.Extensions.Time.Testing;

namespace Manaloc.Tests.Threading;

/// <summary>A scheduled value never flips before its due time, whatever its timer does.</summary>
public sealed class ScheduledValueTimingTests
{
    [Fact]
    public void A_timer_that_truncates_to_milliseconds_does_not_flip_a_fractional_delay_early()
    {
        // System.Threading.Timer takes whole milliseconds and drops the rest: 10.5 ms would fire at 10.
        var clock = new TruncatingClock();
        using var value = new ScheduledValue<int>(1, 2, TimeSpan.FromMilliseconds(10.5), clock);
        clock.Advance(TimeSpan.FromMilliseconds(10));
        Assert.False(value.IsFlipped, "flipped at 10 ms of a 10.5 ms delay");
        clock.Advance(TimeSpan.FromMilliseconds(0.5) - TimeSpan.FromTicks(1));
        Assert.False(value.IsFlipped, "flipped a tick before the due time");
        clock.Advance(TimeSpan.FromMilliseconds(1));
        Assert.True(value.IsFlipped);
        Assert.Equal(2, value.Value);
    }

    [Fact]
    public void A_timer_that_fires_early_is_re_armed_until_the_due_time()
    {
        var clock = new EarlyClock();
        using var value = new ScheduledValue<int>(1, 2, TimeSpan.FromMilliseconds(10), clock);
        for (int i = 0; i < 999; i++)
        {
            clock.Advance(TimeSpan.FromMilliseconds(0.01));
            Assert.False(value.IsFlipped, $"flipped at {(i + 1) * 0.01:0.00} ms of a 10 ms delay");
        }
        clock.Advance(TimeSpan.FromMilliseconds(2)); // the re-armed timer fires within a millisecond (rounded up) of the due time
        Assert.True(value.IsFlipped);
        Assert.Equal(0, clock.ActiveTimers);
    }

    [Fact]
    public void The_system_timer_never_flips_before_the_delay_has_passed()
    {
        // The flip is observed no earlier than it happened, so an observation before the delay proves an early flip.
        for (int i = 0; i < 40; i++)
        {
            var delay = TimeSpan.FromMilliseconds(1.1 + (i % 10) * 0.2);
            long start = Stopwatch.GetTimestamp();
            using var value = new ScheduledValue<bool>(false, true, delay);
            var watchdog = DateTime.UtcNow.AddSeconds(30);
            while (!value.Value) Assert.True(DateTime.UtcNow < watchdog, "the timer did not fire within 30 s");
            var seen = Stopwatch.GetElapsedTime(start);
            Assert.True(seen >= delay, $"try {i}: a {delay.TotalMilliseconds} ms value flipped after {seen.TotalMilliseconds:0.000} ms");
        }
    }

    /// <summary>Timers take whole milliseconds, truncating, as System.Threading.Timer does.</summary>
    private sealed class TruncatingClock : FakeTimeProvider
    {
        public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period)
            => new Adjusted(base.CreateTimer(callback, state, Truncate(dueTime), Truncate(period)), Truncate);

        private static TimeSpan Truncate(TimeSpan t)
            => t == Timeout.InfiniteTimeSpan ? t : TimeSpan.FromMilliseconds(Math.Floor(t.TotalMilliseconds));
    }

    /// <summary>Timers fire after 90% of their due time (their clock runs ahead of the timestamps), never at once.</summary>
    private sealed class EarlyClock : FakeTimeProvider
    {
        private int _active;

        public int ActiveTimers => Volatile.Read(ref _active);

        public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period)
        {
            Interlocked.Increment(ref _active);
            return new Adjusted(base.CreateTimer(callback, state, Early(dueTime), period), Early, () => Interlocked.Decrement(ref _active));
        }

        private static TimeSpan Early(TimeSpan t)
            => t == Timeout.InfiniteTimeSpan || t == TimeSpan.Zero ? t : TimeSpan.FromTicks(Math.Max(1, t.Ticks * 9 / 10));
    }

    private sealed class Adjusted(ITimer inner, Func<TimeSpan, TimeSpan> adjust, Action? onDispose = null) : ITimer
    {
        private int _disposed;

        public bool Change(TimeSpan dueTime, TimeSpan period) => inner.Change(adjust(dueTime), period);

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _disposed, 1) == 0) onDispose?.Invoke();
            inner.Dispose();
        }

        public ValueTask DisposeAsync()
        {
            Dispose();
            return default;
        }
    }
}
