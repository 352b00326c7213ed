using System.Diagnostics;
using Manaloc.Threading;
using Microsoft.Extensions.Time.Testing;

namespace Manaloc.Tests.Threading;

/// <summary>A timed wait never ends before its timeout, counted from the call, on the event's own clock.</summary>
public sealed class EconomicResetEventTimeoutTests
{
    [Theory]
    [InlineData(0.1)]
    [InlineData(0.5)]
    [InlineData(0.9)]
    [InlineData(1.5)]
    [InlineData(2.3)]
    public void A_sub_millisecond_or_fractional_timeout_waits_at_least_that_long(double milliseconds)
    {
        using var e = new EconomicResetEvent();
        var timeout = TimeSpan.FromMilliseconds(milliseconds);
        for (int i = 0; i < 20; i++)
        {
            long start = Stopwatch.GetTimestamp();
            Assert.False(e.Wait(timeout));
            var waited = Stopwatch.GetElapsedTime(start);
            Assert.True(waited >= timeout, $"try {i}: Wait({milliseconds} ms) returned after {waited.TotalMilliseconds:0.000} ms");
        }
    }

    [Fact]
    public void A_millisecond_timeout_waits_at_least_that_long_with_or_without_a_token()
    {
        using var e = new EconomicResetEvent(spinCount: 0);
        using var cts = new CancellationTokenSource();
        for (int i = 0; i < 20; i++)
        {
            long start = Stopwatch.GetTimestamp();
            Assert.False(i % 2 == 0 ? e.Wait(1) : e.Wait(1, cts.Token));
            var waited = Stopwatch.GetElapsedTime(start);
            Assert.True(waited >= TimeSpan.FromMilliseconds(1), $"try {i}: Wait(1) returned after {waited.TotalMilliseconds:0.000} ms");
        }
    }

    [Fact]
    public void Waiting_for_a_deadlines_remaining_time_returns_false_only_once_it_expired()
    {
        // The pattern the docs give: a wait bounded by a Deadline.
        using var e = new EconomicResetEvent();
        for (int i = 0; i < 20; i++)
        {
            var deadline = Deadline.After(TimeSpan.FromMilliseconds(1 + i * 0.37));
            Assert.False(e.Wait(deadline.Remaining));
            Assert.True(deadline.IsExpired, $"try {i}: Wait(deadline.Remaining) returned with {deadline.Remaining} left");
        }
    }

    [Fact]
    public void On_a_fake_clock_the_timeout_runs_from_the_call_not_from_when_the_waiter_blocks()
    {
        // The waiter is held up for 40 minutes of the clock's time just after Wait was called (its
        // first look at the clock): a one-hour timeout then has 20 minutes left when it blocks.
        var clock = new StallingClock();
        using var e = new EconomicResetEvent(spinCount: 0, timeProvider: clock);
        clock.AdvanceAfterNextRead(TimeSpan.FromMinutes(40));
        var errors = new List<Exception>();
        bool? result = null;
        var waiter = EventTestSupport.Start(() => result = e.Wait(TimeSpan.FromHours(1)), errors, "waiter");
        EventTestSupport.WaitUntil(() => e.HasBlockedWaiter, "the waiter blocking");

        AssertTimesOutAfterTheLastTwentyMinutes(clock, waiter, errors, () => result);
    }

    [Fact]
    public void On_a_fake_clock_a_timeout_already_spent_before_blocking_returns_false_without_blocking()
    {
        var clock = new StallingClock();
        using var e = new EconomicResetEvent(spinCount: 0, timeProvider: clock);
        clock.AdvanceAfterNextRead(TimeSpan.FromHours(2));
        var errors = new List<Exception>();
        bool? result = null;
        var waiter = EventTestSupport.Start(() => result = e.Wait(TimeSpan.FromHours(1)), errors, "waiter");
        EventTestSupport.WaitUntil(() => !waiter.IsAlive, "the waiter returning with its hour already spent");
        Assert.Empty(errors);
        Assert.False(result);
        Assert.False(e.HasBlockedWaiter);
    }

    [Fact]
    public void A_cancelled_token_wins_over_a_pending_signal_as_in_SemaphoreSlim_and_ManualResetEventSlim()
    {
        var cancelled = new CancellationToken(canceled: true);
        // The reference rule: both throw before taking what is there, and leave it there.
        using var semaphore = new SemaphoreSlim(1);
        Assert.Throws<OperationCanceledException>(() => semaphore.Wait(cancelled));
        Assert.Equal(1, semaphore.CurrentCount);
        using var manual = new ManualResetEventSlim(initialState: true);
        Assert.Throws<OperationCanceledException>(() => manual.Wait(cancelled));
        Assert.True(manual.IsSet);
        // The event follows it on every overload that takes a token.
        using var e = new EconomicResetEvent(initialState: true);
        Assert.Throws<OperationCanceledException>(() => e.Wait(cancelled));
        Assert.Throws<OperationCanceledException>(() => e.Wait(0, cancelled));
        Assert.Throws<OperationCanceledException>(() => e.Wait(TimeSpan.FromSeconds(1), cancelled));
        Assert.True(e.IsSet);
        Assert.True(e.Wait(0)); // the signal was kept for the next wait
    }

    [Fact]
    public void On_a_fake_clock_time_that_passes_while_the_waiters_timer_is_made_still_counts()
    {
        // The clock moves on by 40 minutes while the waiter makes its timer (after it read the time left): a timer started
        // for the time left as read then would fire 40 minutes late. The hour must still end an hour after the call.
        var clock = new AdvanceOnTimerClock(TimeSpan.FromMinutes(40));
        using var e = new EconomicResetEvent(spinCount: 0, timeProvider: clock);
        var errors = new List<Exception>();
        bool? result = null;
        var waiter = EventTestSupport.Start(() => result = e.Wait(TimeSpan.FromHours(1)), errors, "waiter");
        EventTestSupport.WaitUntil(() => clock.TimersMade >= 2, "the waiter making its timer again after the clock moved");
        AssertTimesOutAfterTheLastTwentyMinutes(clock, waiter, errors, () => result);
    }

    /// <summary>A manual clock that moves on by a set time while the first timer is being made.</summary>
    /// <summary>The waiter of a one-hour Wait whose clock has already moved 40 minutes: alive one tick before the hour, timed out at it.</summary>
    private static void AssertTimesOutAfterTheLastTwentyMinutes(FakeTimeProvider clock, Thread waiter, List<Exception> errors, Func<bool?> result)
    {
        clock.Advance(TimeSpan.FromMinutes(20) - TimeSpan.FromTicks(1));
        Assert.True(waiter.IsAlive, "timed out before the hour was up");
        clock.Advance(TimeSpan.FromTicks(1));
        EventTestSupport.WaitUntil(() => !waiter.IsAlive, "the waiter timing out an hour after its call");
        Assert.Empty(errors);
        Assert.False(result());
    }

    private sealed class AdvanceOnTimerClock(TimeSpan jump) : FakeTimeProvider
    {
        private int _timers;

        public int TimersMade => Volatile.Read(ref _timers);

        public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period)
        {
            if (Interlocked.Increment(ref _timers) == 1) Advance(jump);
            return base.CreateTimer(callback, state, dueTime, period);
        }
    }

    [Fact]
    public void A_negative_fractional_timeout_is_refused()
    {
        using var e = new EconomicResetEvent();
        Assert.Throws<ArgumentOutOfRangeException>(() => e.Wait(TimeSpan.FromMilliseconds(-0.5)));
        Assert.Throws<ArgumentOutOfRangeException>(() => e.Wait(TimeSpan.FromMilliseconds(int.MaxValue + 1.0)));
    }

    /// <summary>A manual clock on which time can jump right after a read: a thread held up between two steps.</summary>
    private sealed class StallingClock : FakeTimeProvider
    {
        private long _pendingTicks;

        public void AdvanceAfterNextRead(TimeSpan by) => Interlocked.Exchange(ref _pendingTicks, by.Ticks);

        public override long GetTimestamp()
        {
            long now = base.GetTimestamp();
            long pending = Interlocked.Exchange(ref _pendingTicks, 0);
            if (pending != 0) Advance(TimeSpan.FromTicks(pending));
            return now;
        }
    }
}
