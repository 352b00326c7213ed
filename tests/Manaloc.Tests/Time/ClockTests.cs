using System.Diagnostics;
using Manaloc.Time;

namespace Manaloc.Tests.Time;

public sealed class ClockTests
{
    private static readonly DateTime FileTimeEpoch = new(1601, 1, 1, 0, 0, 0, DateTimeKind.Utc);

    [Fact]
    public void Epoch_constants_match_the_calendar()
    {
        Assert.Equal(Clock.FileTimeEpochTicks, FileTimeEpoch.Ticks);
        Assert.Equal(Clock.UnixEpochTicks, DateTime.UnixEpoch.Ticks);
        Assert.Equal(Clock.MaxFileTime, DateTime.MaxValue.Ticks - FileTimeEpoch.Ticks);
    }

    [Fact]
    public void FileTime_agrees_with_the_runtime_on_random_instants()
    {
        var random = new Random(2026_11_22);
        for (int i = 0; i < 100_000; i++)
        {
            var instant = new DateTime(random.NextInt64(Clock.FileTimeEpochTicks, DateTime.MaxValue.Ticks + 1), DateTimeKind.Utc);
            long fileTime = Clock.ToFileTime(instant);
            Assert.Equal(instant.ToFileTimeUtc(), fileTime);
            Assert.Equal(DateTime.FromFileTimeUtc(fileTime), Clock.FromFileTime(fileTime));
            Assert.Equal(instant, Clock.FromFileTime(fileTime)); // tick-exact round trip
            Assert.Equal(DateTimeKind.Utc, Clock.FromFileTime(fileTime).Kind);
        }
    }

    [Fact]
    public void Unix_nanoseconds_round_trip_at_tick_precision()
    {
        var random = new Random(17);
        long min = Clock.UnixEpochTicks + long.MinValue / Clock.NanosecondsPerTick;
        long max = Clock.UnixEpochTicks + long.MaxValue / Clock.NanosecondsPerTick;
        for (int i = 0; i < 100_000; i++)
        {
            var instant = new DateTime(random.NextInt64(min, max + 1), DateTimeKind.Utc);
            long ns = Clock.ToUnixNanoseconds(instant);
            Assert.Equal(0, ns % 100);
            Assert.Equal((instant.Ticks - Clock.UnixEpochTicks) * 100, ns);
            Assert.Equal(instant, Clock.FromUnixNanoseconds(ns));
            Assert.Equal(Clock.ToFileTime(instant), Clock.UnixNanosecondsToFileTime(ns));
            if (instant.Ticks >= Clock.FileTimeEpochTicks)
            {
                Assert.Equal(ns, Clock.FileTimeToUnixNanoseconds(Clock.ToFileTime(instant)));
            }
        }
    }

    [Theory]
    [InlineData(0L, 0L)]
    [InlineData(99L, 0L)]
    [InlineData(100L, 1L)]
    [InlineData(-1L, -1L)]
    [InlineData(-100L, -1L)]
    [InlineData(-101L, -2L)]
    public void Sub_tick_nanoseconds_round_toward_negative_infinity(long ns, long ticksFromEpoch)
        => Assert.Equal(Clock.UnixEpochTicks + ticksFromEpoch, Clock.FromUnixNanoseconds(ns).Ticks);

    [Fact]
    public void Every_long_is_a_valid_unix_nanosecond_count()
    {
        Assert.Equal(new DateTime(1677, 9, 21, 0, 12, 43, DateTimeKind.Utc).AddTicks(1452241), Clock.FromUnixNanoseconds(long.MinValue));
        Assert.Equal(new DateTime(2262, 4, 11, 23, 47, 16, DateTimeKind.Utc).AddTicks(8547758), Clock.FromUnixNanoseconds(long.MaxValue));
    }

    [Fact]
    public void Out_of_range_input_is_rejected()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => Clock.ToFileTime(FileTimeEpoch.AddTicks(-1)));
        Assert.Throws<ArgumentOutOfRangeException>(() => Clock.ToFileTime(DateTime.MinValue));
        Assert.Throws<ArgumentOutOfRangeException>(() => Clock.FromFileTime(-1));
        Assert.Throws<ArgumentOutOfRangeException>(() => Clock.FromFileTime(long.MinValue));
        Assert.Throws<ArgumentOutOfRangeException>(() => Clock.FromFileTime(Clock.MaxFileTime + 1));
        Assert.Throws<ArgumentOutOfRangeException>(() => Clock.FromFileTime(long.MaxValue));
        Assert.Throws<ArgumentOutOfRangeException>(() => Clock.ToUnixNanoseconds(new DateTime(1677, 9, 21, 0, 0, 0, DateTimeKind.Utc)));
        Assert.Throws<ArgumentOutOfRangeException>(() => Clock.ToUnixNanoseconds(new DateTime(2262, 4, 12, 0, 0, 0, DateTimeKind.Utc)));
        Assert.Throws<ArgumentOutOfRangeException>(() => Clock.ToUnixNanoseconds(DateTime.MaxValue));
        Assert.Throws<ArgumentOutOfRangeException>(() => Clock.FileTimeToUnixNanoseconds(0)); // 1601 is before 1677
        var e = Assert.Throws<ArgumentOutOfRangeException>(() => Clock.FromFileTime(-5));
        Assert.Equal("fileTime", e.ParamName);
    }

    [Fact]
    public void Boundaries_are_inclusive()
    {
        Assert.Equal(0, Clock.ToFileTime(FileTimeEpoch));
        Assert.Equal(DateTime.MaxValue.Ticks, Clock.FromFileTime(Clock.MaxFileTime).Ticks);
        Assert.Equal(Clock.MaxFileTime, Clock.ToFileTime(DateTime.SpecifyKind(DateTime.MaxValue, DateTimeKind.Utc)));
    }

    [Fact]
    public void Local_times_are_rejected_and_unspecified_is_utc()
    {
        var local = new DateTime(2020, 1, 1, 0, 0, 0, DateTimeKind.Local);
        var ex = Assert.Throws<ArgumentException>(() => Clock.ToFileTime(local));
        Assert.Contains("UTC", ex.Message);
        Assert.Throws<ArgumentException>(() => Clock.ToUnixNanoseconds(local));
        var unspecified = new DateTime(2020, 1, 1, 0, 0, 0, DateTimeKind.Unspecified);
        Assert.Equal(Clock.ToFileTime(DateTime.SpecifyKind(unspecified, DateTimeKind.Utc)), Clock.ToFileTime(unspecified));
    }

    [Fact]
    public void Timestamps_are_monotonic_and_convert_exactly()
    {
        long previous = Clock.GetTimestamp();
        for (int i = 0; i < 10_000; i++)
        {
            long now = Clock.GetTimestamp();
            Assert.True(now >= previous);
            previous = now;
        }
        Assert.Equal(Stopwatch.Frequency, Clock.Frequency);
        Assert.Equal(1_000_000_000L, Clock.TimestampToNanoseconds(Clock.Frequency));
        Assert.Equal(Clock.Frequency, Clock.NanosecondsToTimestamp(1_000_000_000L));
        Assert.Equal(TimeSpan.FromSeconds(3), Clock.GetElapsedTime(10, 10 + 3 * Clock.Frequency));
        Assert.Equal(TimeSpan.FromSeconds(-1), Clock.GetElapsedTime(Clock.Frequency, 0));
        // A day in timestamp units converts without the rounding a double would add.
        long day = 86_400L * Clock.Frequency + 1;
        Assert.Equal((long)((Int128)day * 1_000_000_000 / Clock.Frequency), Clock.TimestampToNanoseconds(day));
        if (Clock.Frequency < 1_000_000_000)
        {
            Assert.Throws<OverflowException>(() => Clock.TimestampToNanoseconds(long.MaxValue));
        }
        else
        {
            Assert.Equal(long.MaxValue / (Clock.Frequency / 1_000_000_000), Clock.TimestampToNanoseconds(long.MaxValue));
        }
    }

    [Fact]
    public void Now_readings_agree_with_the_runtime_and_do_not_allocate()
    {
        long before = Clock.ToUnixNanoseconds(DateTime.UtcNow);
        long ns = Clock.UtcNowUnixNanoseconds();
        long fileTime = Clock.UtcNowFileTime();
        long after = Clock.ToUnixNanoseconds(DateTime.UtcNow);
        Assert.InRange(ns, before, after);
        Assert.InRange(Clock.FileTimeToUnixNanoseconds(fileTime), before, after);

        // Warm up, then count allocations exactly.
        long sink = 0;
        for (int i = 0; i < 1000; i++) sink += Clock.GetTimestamp() + Clock.UtcNowUnixNanoseconds() + Clock.UtcNowFileTime();
        long allocated = Allocations.OnThisThread(() =>
        {
            for (int i = 0; i < 100_000; i++)
            {
                sink += Clock.GetTimestamp() + Clock.UtcNowUnixNanoseconds() + Clock.UtcNowFileTime()
                        + Clock.GetElapsedTime(sink & 0xffff).Ticks + Clock.ToFileTime(DateTime.UtcNow);
            }
        });
        Assert.Equal(0, allocated);
        GC.KeepAlive(sink);
    }
}
