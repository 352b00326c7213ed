using Manaloc.Threading;

namespace Manaloc.Tests.Threading;

public sealed class EconomicResetEventTests
{
    [Fact]
    public void Set_then_wait_consumes_the_signal_once()
    {
        using var e = new EconomicResetEvent();
        Assert.False(e.IsSet);
        Assert.False(e.Wait(0));

        e.Set();
        Assert.True(e.IsSet);
        Assert.True(e.Wait(0));
        Assert.False(e.IsSet);
        Assert.False(e.Wait(0));
    }

    [Fact]
    public void Sets_do_not_accumulate()
    {
        using var e = new EconomicResetEvent();
        e.Set();
        e.Set();
        e.Set();
        Assert.True(e.Wait(0));
        Assert.False(e.Wait(0));
    }

    [Fact]
    public void Initial_state_and_reset()
    {
        using var e = new EconomicResetEvent(initialState: true);
        Assert.True(e.IsSet);
        e.Reset();
        Assert.False(e.Wait(0));
        e.Reset(); // resetting an unset event is a no-op
        Assert.False(e.IsSet);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(EconomicResetEvent.DefaultSpinCount)]
    public void A_blocked_waiter_is_released_by_set(int spinCount)
    {
        using var e = new EconomicResetEvent(spinCount: spinCount);
        var errors = new List<Exception>();
        bool returned = false;
        var waiter = EventTestSupport.Start(() => { e.Wait(); Volatile.Write(ref returned, true); }, errors, "waiter");

        EventTestSupport.WaitUntil(() => e.HasBlockedWaiter, "the waiter blocking");
        Assert.False(Volatile.Read(ref returned));
        e.Set();
        EventTestSupport.WaitUntil(() => !waiter.IsAlive, "the waiter returning");

        Assert.Empty(errors);
        Assert.True(returned);
        Assert.False(e.IsSet); // the signal went to the waiter, not into the state
    }

    [Fact]
    public void A_second_concurrent_waiter_gets_InvalidOperationException()
    {
        using var e = new EconomicResetEvent(spinCount: 0);
        var errors = new List<Exception>();
        var waiter = EventTestSupport.Start(() => e.Wait(), errors, "first waiter");
        EventTestSupport.WaitUntil(() => e.HasBlockedWaiter, "the first waiter blocking");

        Assert.Throws<InvalidOperationException>(() => e.Wait());
        Assert.Throws<InvalidOperationException>(() => e.Wait(0));

        e.Set(); // the first waiter is still served
        EventTestSupport.WaitUntil(() => !waiter.IsAlive, "the first waiter returning");
        Assert.Empty(errors);
    }

    [Fact]
    public void Wait_times_out_on_the_injected_clock_and_leaves_no_state_behind()
    {
        var clock = new TimerCountingClock();
        using var e = new EconomicResetEvent(spinCount: 0, timeProvider: clock);
        var errors = new List<Exception>();
        bool? result = null;
        var waiter = EventTestSupport.Start(() => result = e.Wait(TimeSpan.FromHours(1)), errors, "waiter");
        EventTestSupport.WaitUntil(() => e.HasBlockedWaiter && clock.ActiveTimers == 1, "the waiter blocking with a timer");

        clock.Advance(TimeSpan.FromMinutes(59));
        Assert.True(waiter.IsAlive);
        clock.Advance(TimeSpan.FromMinutes(1));
        EventTestSupport.WaitUntil(() => !waiter.IsAlive, "the waiter timing out");

        Assert.Empty(errors);
        Assert.False(result);
        Assert.False(e.HasBlockedWaiter);
        e.Set(); // the event is usable again, and the timed-out waiter did not eat this signal
        Assert.True(e.Wait(0));
    }

    [Fact]
    public void Wait_with_a_real_timeout_returns_false()
    {
        using var e = new EconomicResetEvent();
        Assert.False(e.Wait(TimeSpan.FromMilliseconds(20)));
        Assert.False(e.HasBlockedWaiter);
    }

    [Fact]
    public void Cancellation_stops_a_blocked_wait_and_the_event_stays_usable()
    {
        using var e = new EconomicResetEvent(spinCount: 0);
        using var cts = new CancellationTokenSource();
        var errors = new List<Exception>();
        var waiter = EventTestSupport.Start(() => e.Wait(cts.Token), errors, "waiter");
        EventTestSupport.WaitUntil(() => e.HasBlockedWaiter, "the waiter blocking");

        cts.Cancel();
        EventTestSupport.WaitUntil(() => !waiter.IsAlive, "the waiter returning");

        var error = Assert.Single(errors);
        var oce = Assert.IsAssignableFrom<OperationCanceledException>(error);
        Assert.Equal(cts.Token, oce.CancellationToken);
        e.Set();
        Assert.True(e.Wait(0));
    }

    [Fact]
    public void A_cancelled_token_throws_even_when_set()
    {
        using var e = new EconomicResetEvent(initialState: true);
        Assert.Throws<OperationCanceledException>(() => e.Wait(new CancellationToken(canceled: true)));
        Assert.True(e.IsSet); // the signal was not consumed
    }

    [Fact]
    public void Dispose_wakes_the_waiter_with_ObjectDisposedException()
    {
        var e = new EconomicResetEvent(spinCount: 0);
        var errors = new List<Exception>();
        var waiter = EventTestSupport.Start(() => e.Wait(), errors, "waiter");
        EventTestSupport.WaitUntil(() => e.HasBlockedWaiter, "the waiter blocking");

        e.Dispose();
        EventTestSupport.WaitUntil(() => !waiter.IsAlive, "the waiter waking");

        Assert.IsType<ObjectDisposedException>(Assert.Single(errors));
        Assert.Throws<ObjectDisposedException>(() => e.Set());
        Assert.Throws<ObjectDisposedException>(() => e.Wait(0));
        Assert.Throws<ObjectDisposedException>(() => e.Reset());
        e.Dispose(); // idempotent
    }

    [Theory]
    [InlineData(-1)]
    [InlineData(EconomicResetEvent.MaxSpinCount + 1)]
    public void Bad_arguments_are_rejected(int spinCount)
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new EconomicResetEvent(spinCount: spinCount));
        using var e = new EconomicResetEvent();
        Assert.Throws<ArgumentOutOfRangeException>(() => e.Wait(-2));
        Assert.Throws<ArgumentOutOfRangeException>(() => e.Wait(TimeSpan.FromMilliseconds(-5)));
    }

    [Fact]
    public void Set_and_wait_without_blocking_allocate_nothing()
    {
        using var e = new EconomicResetEvent();
        for (int i = 0; i < 1000; i++) { e.Set(); e.Wait(); }

        long allocated = Allocations.OnThisThread(() =>
        {
            for (int i = 0; i < 100_000; i++)
            {
                e.Set();
                e.Set();
                e.Wait();
                e.Wait(0);
            }
        });

        Assert.Equal(0, allocated);
    }
}
