using Manaloc.Threading;
using Microsoft.Extensions.Time.Testing;

namespace Manaloc.Tests.Threading;

public sealed class DeadlineTests
{
    [Fact]
    public void Expires_exactly_when_the_fake_clock_reaches_the_due_time()
    {
        var clock = new FakeTimeProvider();
        var deadline = Deadline.After(TimeSpan.FromSeconds(5), clock);

        Assert.False(deadline.IsExpired);
        Assert.Equal(TimeSpan.FromSeconds(5), deadline.Remaining);
        clock.Advance(TimeSpan.FromSeconds(5) - TimeSpan.FromTicks(1));
        Assert.False(deadline.IsExpired);
        Assert.Equal(TimeSpan.FromTicks(1), deadline.Remaining);
        clock.Advance(TimeSpan.FromTicks(1));
        Assert.True(deadline.IsExpired);
        Assert.Equal(TimeSpan.Zero, deadline.Remaining);
        clock.Advance(TimeSpan.FromDays(1));
        Assert.True(deadline.IsExpired);
    }

    [Fact]
    public void Zero_timeout_is_expired_at_once()
    {
        var clock = new FakeTimeProvider();
        Assert.True(Deadline.After(TimeSpan.Zero, clock).IsExpired);
    }

    [Fact]
    public void Infinite_and_default_never_expire()
    {
        var clock = new FakeTimeProvider();
        var infinite = Deadline.After(Timeout.InfiniteTimeSpan, clock);
        clock.Advance(TimeSpan.FromDays(365));
        Assert.False(infinite.IsExpired);
        Assert.False(default(Deadline).IsExpired);
        Assert.True(infinite.IsInfinite);
        Assert.Equal(Deadline.Infinite, default);
        Assert.Equal(Timeout.InfiniteTimeSpan, infinite.Remaining);
    }

    [Fact]
    public void A_due_time_beyond_the_clock_saturates_to_infinite()
    {
        Assert.True(Deadline.After(TimeSpan.MaxValue).IsInfinite);
        Assert.False(Deadline.After(TimeSpan.MaxValue).IsExpired);
    }

    [Fact]
    public void A_clock_with_negative_timestamps_gives_a_finite_deadline()
    {
        var clock = new NegativeClock();
        var deadline = Deadline.After(TimeSpan.FromSeconds(1), clock);
        Assert.False(deadline.IsInfinite);
        Assert.False(deadline.IsExpired);
        Assert.Equal(TimeSpan.FromSeconds(1), deadline.Remaining);
        var far = Deadline.After(TimeSpan.MaxValue, clock); // now + span still fits below long.MaxValue here
        Assert.False(far.IsExpired);
        Assert.Equal(TimeSpan.MaxValue, far.Remaining);
    }

    /// <summary>A fixed clock before its epoch: timestamps are negative.</summary>
    private sealed class NegativeClock : TimeProvider
    {
        public override long TimestampFrequency => TimeSpan.TicksPerSecond;

        public override long GetTimestamp() => -TimeSpan.TicksPerDay;
    }

    [Fact]
    public void Negative_timeout_is_refused()
    {
        var e = Assert.Throws<ArgumentOutOfRangeException>(() => Deadline.After(TimeSpan.FromMilliseconds(-2)));
        Assert.Equal("timeout", e.ParamName);
    }

    [Fact]
    public void System_clock_deadline_expires()
    {
        var deadline = Deadline.After(TimeSpan.FromMilliseconds(20));
        var watchdog = DateTime.UtcNow.AddSeconds(30);
        while (!deadline.IsExpired)
        {
            Assert.True(DateTime.UtcNow < watchdog, "a 20 ms deadline did not expire within 30 s");
            Thread.Sleep(1);
        }
        Assert.Equal(TimeSpan.Zero, deadline.Remaining);
    }

    [Fact]
    public void Creating_and_polling_allocate_nothing()
    {
        var clock = new FakeTimeProvider();
        bool sink = false;
        for (int i = 0; i < 100; i++) sink ^= Deadline.After(TimeSpan.FromSeconds(1)).IsExpired ^ Deadline.After(TimeSpan.FromSeconds(1), clock).IsExpired;
        long allocated = Allocations.OnThisThread(() =>
        {
            for (int i = 0; i < 10_000; i++)
            {
                var system = Deadline.After(TimeSpan.FromSeconds(1));
                var fake = Deadline.After(TimeSpan.FromSeconds(1), clock);
                sink ^= system.IsExpired ^ fake.IsExpired;
            }
        });
        Assert.Equal(0, allocated);
        GC.KeepAlive(sink);
    }

    [Fact]
    public void Equality_is_by_clock_and_due_time()
    {
        var clock = new FakeTimeProvider();
        var a = Deadline.After(TimeSpan.FromSeconds(1), clock);
        var b = Deadline.After(TimeSpan.FromSeconds(1), clock);
        var c = Deadline.After(TimeSpan.FromSeconds(2), clock);
        Assert.True(a == b);
        Assert.True(a != c);
        Assert.Equal(a.GetHashCode(), b.GetHashCode());
    }
}

/// <summary>Deadlines on clocks whose frequency is not a multiple of TimeSpan's: never earlier than asked.</summary>
public sealed class DeadlineRoundingTests
{
    [Fact]
    public void On_a_millisecond_clock_a_sub_millisecond_timeout_is_not_expired_at_once()
    {
        var clock = new CoarseClock(frequency: 1000);
        var deadline = Deadline.After(TimeSpan.FromMilliseconds(0.5), clock);
        Assert.False(deadline.IsExpired, "a 0.5 ms deadline expired at once on a millisecond clock");
        Assert.True(deadline.Remaining >= TimeSpan.FromMilliseconds(0.5));
        clock.Now += 1;
        Assert.True(deadline.IsExpired);
    }

    [Theory]
    [InlineData(1000L)]
    [InlineData(3_579_545L)]   // the ACPI power-management timer, an old QueryPerformanceCounter source
    [InlineData(14_318_180L)]  // HPET
    [InlineData(999_999_999L)]
    public void Remaining_is_never_below_the_timeout_asked(long frequency)
    {
        var clock = new CoarseClock(frequency);
        foreach (long ticks in new long[] { 1, 7, 9_999, 10_001, 123_456_789 })
        {
            var timeout = TimeSpan.FromTicks(ticks);
            var deadline = Deadline.After(timeout, clock);
            Assert.False(deadline.IsExpired, $"{ticks} ticks at {frequency} Hz expired at once");
            Assert.True(deadline.Remaining >= timeout, $"{ticks} ticks at {frequency} Hz: {deadline.Remaining.Ticks} left");
        }
    }

    /// <summary>A fixed clock with any frequency; the test moves it.</summary>
    private sealed class CoarseClock(long frequency) : TimeProvider
    {
        public long Now = 1_000_000;

        public override long TimestampFrequency => frequency;

        public override long GetTimestamp() => Now;
    }
}
