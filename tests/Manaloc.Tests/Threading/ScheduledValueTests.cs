using Manaloc.Threading;
using Microsoft.Extensions.Time.Testing;

namespace Manaloc.Tests.Threading;

public sealed class ScheduledValueTests
{
    [Fact]
    public void Flips_when_the_fake_clock_reaches_the_delay()
    {
        var clock = new TimerCountingClock();
        using var value = new ScheduledValue<string>("accepting", "draining", TimeSpan.FromSeconds(10), clock);

        Assert.Equal("accepting", value.Value);
        clock.Advance(TimeSpan.FromSeconds(9.999));
        Assert.Equal("accepting", value.Value);
        Assert.False(value.IsFlipped);
        clock.Advance(TimeSpan.FromMilliseconds(1));
        Assert.Equal("draining", value.Value);
        Assert.True(value.IsFlipped);
        clock.Advance(TimeSpan.FromDays(1));
        Assert.Equal("draining", value.Value);
        Assert.Equal(0, clock.ActiveTimers);
    }

    [Fact]
    public void Dispose_before_the_due_time_cancels_the_flip()
    {
        var clock = new TimerCountingClock();
        var value = new ScheduledValue<bool>(true, false, TimeSpan.FromSeconds(1), clock);
        Assert.Equal(1, clock.ActiveTimers);
        value.Dispose();
        Assert.Equal(0, clock.ActiveTimers);
        clock.Advance(TimeSpan.FromSeconds(2));
        Assert.True(value.Value);
    }

    [Fact]
    public void Dispose_wins_over_a_timer_callback_already_running()
    {
        // A timer callback may run after its timer's Dispose returned (it was already under way).
        var clock = new CapturingTimeProvider();
        var value = new ScheduledValue<bool>(true, false, TimeSpan.FromSeconds(1), clock);
        clock.Advance(TimeSpan.FromSeconds(1)); // due (the inert timer does not fire by itself)
        value.Dispose();
        clock.RunCapturedCallback(); // the callback that was already running
        Assert.True(value.Value);
        Assert.False(value.IsFlipped);
        value.FlipNow(); // an explicit flip still works
        Assert.False(value.Value);
    }

    [Fact]
    public void A_flip_that_happened_stays_after_Dispose()
    {
        var clock = new CapturingTimeProvider();
        var value = new ScheduledValue<bool>(true, false, TimeSpan.FromSeconds(1), clock);
        clock.Advance(TimeSpan.FromSeconds(1));
        clock.RunCapturedCallback();
        value.Dispose();
        Assert.False(value.Value);
        Assert.True(value.IsFlipped);
    }

    /// <summary>A manual clock whose timers never fire by themselves; the test runs the callback when it likes.</summary>
    private sealed class CapturingTimeProvider : FakeTimeProvider
    {
        private TimerCallback? _callback;
        private object? _state;

        public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period)
        {
            _callback = callback;
            _state = state;
            return new InertTimer();
        }

        public void RunCapturedCallback() => _callback!(_state);

        private sealed class InertTimer : ITimer
        {
            public bool Change(TimeSpan dueTime, TimeSpan period) => true;

            public void Dispose()
            {
            }

            public ValueTask DisposeAsync() => default;
        }
    }

    [Fact]
    public void FlipNow_flips_and_stops_the_timer()
    {
        var clock = new TimerCountingClock();
        using var value = new ScheduledValue<int>(1, 2, TimeSpan.FromHours(1), clock);
        value.FlipNow();
        Assert.Equal(2, value.Value);
        Assert.Equal(0, clock.ActiveTimers);
    }

    [Fact]
    public void Zero_delay_flips_at_once_and_infinite_never_by_itself()
    {
        var clock = new TimerCountingClock();
        using var now = new ScheduledValue<int>(1, 2, TimeSpan.Zero, clock);
        using var never = new ScheduledValue<int>(1, 2, Timeout.InfiniteTimeSpan, clock);
        clock.Advance(TimeSpan.FromDays(1000));
        Assert.Equal(2, now.Value);
        Assert.Equal(1, never.Value);
        Assert.Equal(0, clock.ActiveTimers);
    }

    [Fact]
    public void Negative_delay_is_refused()
    {
        var e = Assert.Throws<ArgumentOutOfRangeException>(() => new ScheduledValue<int>(1, 2, TimeSpan.FromSeconds(-1)));
        Assert.Equal("delay", e.ParamName);
    }

    [Fact]
    public void Large_struct_values_are_never_torn()
    {
        var clock = new TimerCountingClock();
        var before = (1L, 1L, 1L, 1L);
        var after = (2L, 2L, 2L, 2L);
        using var value = new ScheduledValue<(long, long, long, long)>(before, after, TimeSpan.FromSeconds(1), clock);
        using var stop = new CancellationTokenSource();
        int torn = 0;
        var reader = new Thread(() =>
        {
            while (!stop.IsCancellationRequested)
            {
                var v = value.Value;
                if (v != before && v != after) Interlocked.Increment(ref torn);
            }
        });
        reader.Start();
        clock.Advance(TimeSpan.FromSeconds(1));
        Thread.Sleep(20);
        stop.Cancel();
        Assert.True(reader.Join(TimeSpan.FromSeconds(30)));
        Assert.Equal(0, torn);
        Assert.Equal(after, value.Value);
    }

    [Fact]
    public void System_timer_flips_the_value()
    {
        using var value = new ScheduledValue<bool>(false, true, TimeSpan.FromMilliseconds(10));
        var watchdog = DateTime.UtcNow.AddSeconds(30);
        while (!value.Value)
        {
            Assert.True(DateTime.UtcNow < watchdog, "a 10 ms system timer did not fire within 30 s");
            Thread.Sleep(1);
        }
    }

    [Fact]
    public void Polling_allocates_nothing()
    {
        var clock = new TimerCountingClock();
        using var value = new ScheduledValue<bool>(false, true, TimeSpan.FromSeconds(1), clock);
        bool sink = false;
        for (int i = 0; i < 100; i++) sink ^= value.Value;
        Assert.Equal(0, Allocations.OnThisThread(() => { for (int i = 0; i < 100_000; i++) sink ^= value.Value; }));
        GC.KeepAlive(sink);
    }
}
