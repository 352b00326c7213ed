using CsCheck;
using Manaloc.Threading;
using Manaloc.Time;

namespace Manaloc.Concurrency.Tests.Properties;

/// <summary>Clock conversions and Deadline against exact (128-bit) arithmetic.</summary>
public sealed class TimeProperties
{
    private static readonly long Iterations = PoolModelTests.Iterations * 30;

    private static readonly Gen<DateTime> Utc = Gen.Long[0, DateTime.MaxValue.Ticks].Select(t => new DateTime(t, DateTimeKind.Utc));

    [Fact]
    public void FileTime_round_trips_every_instant_since_1601()
        => Utc.Where(d => d.Ticks >= Clock.FileTimeEpochTicks)
            .Sample(d => Clock.FromFileTime(Clock.ToFileTime(d)) == d && Clock.FromFileTime(Clock.ToFileTime(d)).Kind == DateTimeKind.Utc, iter: Iterations);

    /// <summary>Unix nanoseconds in 64 bits: 1677-09-21 to 2262-04-11.</summary>
    private static readonly Gen<DateTime> UnixRepresentable = Gen.Long[Clock.UnixEpochTicks + long.MinValue / 100 + 1, Clock.UnixEpochTicks + long.MaxValue / 100 - 1]
        .Select(t => new DateTime(t, DateTimeKind.Utc));

    [Fact]
    public void Unix_nanoseconds_round_trip_to_the_tick()
        => UnixRepresentable.Sample(d =>
        {
            long ns = Clock.ToUnixNanoseconds(d);
            return ns == (d.Ticks - Clock.UnixEpochTicks) * Clock.NanosecondsPerTick && Clock.FromUnixNanoseconds(ns) == d;
        }, iter: Iterations);

    [Fact]
    public void FileTime_and_unix_nanoseconds_agree_both_ways()
        => UnixRepresentable.Where(d => d.Ticks >= Clock.FileTimeEpochTicks).Select(d => d.Ticks - Clock.FileTimeEpochTicks)
            .Sample(ft => Clock.UnixNanosecondsToFileTime(Clock.FileTimeToUnixNanoseconds(ft)) == ft, iter: Iterations);

    [Fact]
    public void Instants_outside_unix_nanoseconds_get_a_clear_exception()
        => Utc.Where(d => d.Ticks < Clock.UnixEpochTicks + long.MinValue / 100 || d.Ticks > Clock.UnixEpochTicks + long.MaxValue / 100)
            .Sample(d => Assert.Throws<ArgumentOutOfRangeException>(() => Clock.ToUnixNanoseconds(d)).Message.Contains("Unix nanoseconds"), iter: Iterations);

    [Fact]
    public void Timestamp_and_nanoseconds_convert_exactly_and_monotonically()
        => Gen.Long[-1_000_000_000_000_000, 1_000_000_000_000_000].Select(Gen.Long[0, 1_000_000]).Sample((ticks, step) =>
        {
            long ns = Clock.TimestampToNanoseconds(ticks);
            Int128 exact = (Int128)ticks * 1_000_000_000 / Clock.Frequency; // truncation toward zero, as documented
            return ns == exact && Clock.TimestampToNanoseconds(ticks + step) >= ns;
        }, iter: Iterations);

    /// <summary>Frequencies: the common ones, and awkward ones that do not divide 10 MHz evenly.</summary>
    private static readonly Gen<long> Frequency = Gen.OneOf<long>(1_000_000_000L, 10_000_000L, 1_000_000L, 3L, 7L, 1_000_003L, 2_343_750L, 24_000_000L);

    /// <summary>
    /// A deadline never expires early: at any moment the clock shows, IsExpired implies the time
    /// really elapsed (in exact arithmetic) is at least the timeout, and Remaining is never
    /// shorter than what is really left.
    /// </summary>
    /// <remarks>Found a real bug on clocks slower than 10 MHz or not a multiple of it (After truncated the
    /// timeout to whole timestamp ticks, so the deadline fell up to one timestamp tick early; After now rounds
    /// up). CsCheck's shrunk case (seed 5ClqEMLrJYR1): 1 MHz, timeout 7,724,010,144 ticks, one step of
    /// 810,057 µs: Remaining said 771.5909570 s where 771.5909574 s were left;
    /// <see cref="Deadline_on_a_1_MHz_clock_is_not_early"/> is the regression.</remarks>
    [Fact]
    public void Deadline_never_expires_early_on_any_clock() => DeadlineNeverEarly(Frequency);

    /// <summary>The shrunk failure of the property above, as a plain regression test.</summary>
    [Fact]
    public void Deadline_on_a_1_MHz_clock_is_not_early()
    {
        var clock = new SteppedClock(1_000_000, 279_478_726);
        var deadline = Deadline.After(TimeSpan.FromTicks(7_724_010_144), clock);
        clock.Advance(810_057);
        Assert.True(deadline.Remaining >= TimeSpan.FromTicks(7_724_010_144 - 8_100_570), $"Remaining {deadline.Remaining.Ticks} ticks");
        clock.Advance(772_401_014 - 810_057); // one microsecond tick short of the timeout (772,401,014.4 µs)
        Assert.False(deadline.IsExpired, "expired 0.4 µs before its timeout");
    }

    /// <summary>The same property on the clocks whose frequency divides evenly (the system clocks).</summary>
    [Fact]
    public void Deadline_never_expires_early_on_even_clocks() => DeadlineNeverEarly(Gen.OneOf<long>(1_000_000_000L, 10_000_000L, 20_000_000L));

    private static void DeadlineNeverEarly(Gen<long> frequency)
        => Gen.Select(frequency, Gen.Long[0, 10_000_000_000], Gen.Long[0, 1L << 40], Gen.Long[0, 1L << 20].Array[1, 8])
            .Sample((hz, timeoutTicks, start, steps) =>
            {
                var clock = new SteppedClock(hz, start);
                var deadline = Deadline.After(TimeSpan.FromTicks(timeoutTicks), clock);
                long elapsed = 0;
                foreach (long step in steps)
                {
                    clock.Advance(step);
                    elapsed += step;
                    Int128 elapsedTicks100ns = (Int128)elapsed * TimeSpan.TicksPerSecond; // scaled by hz, exact
                    Int128 timeoutScaled = (Int128)timeoutTicks * hz;
                    if (deadline.IsExpired && elapsedTicks100ns < timeoutScaled) return false; // expired early
                    Int128 leftScaled = timeoutScaled - elapsedTicks100ns;
                    if (leftScaled > 0 && (Int128)deadline.Remaining.Ticks * hz < leftScaled) return false; // Remaining too short
                }
                return true;
            }, iter: Iterations);
}
