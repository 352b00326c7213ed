using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Manaloc.Time;

/// <summary>
/// Zero-allocation timestamps and exact conversions between <see cref="DateTime"/> (UTC),
/// Unix time in nanoseconds and Windows FILETIME (100-ns intervals since 1601-01-01 UTC).
/// </summary>
/// <remarks>
/// <para>
/// Why: measuring and timestamping on a hot path must not allocate and must not drift through
/// floating-point arithmetic. Every member here is allocation-free and integer-exact.
/// </para>
/// <para>
/// Monotonic timestamps (<see cref="GetTimestamp"/>) come from the high-resolution performance
/// counter: they never go backwards and are unaffected by wall-clock changes; use them for
/// intervals. Wall-clock conversions treat <see cref="DateTimeKind.Unspecified"/> as UTC and
/// reject <see cref="DateTimeKind.Local"/>, since a local time is ambiguous across daylight
/// saving changes. A value outside the target format's range raises
/// <see cref="ArgumentOutOfRangeException"/>; nothing is clamped or wrapped.
/// </para>
/// <para>Thread safety: all members are stateless and safe to call from any thread.</para>
/// </remarks>
public static class Clock
{
    /// <summary>Ticks of 1601-01-01T00:00:00Z, the FILETIME epoch, in <see cref="DateTime.Ticks"/>.</summary>
    public const long FileTimeEpochTicks = 504_911_232_000_000_000;

    /// <summary>Ticks of 1970-01-01T00:00:00Z, the Unix epoch, in <see cref="DateTime.Ticks"/>.</summary>
    public const long UnixEpochTicks = 621_355_968_000_000_000;

    /// <summary>Nanoseconds in one <see cref="DateTime"/> tick.</summary>
    public const long NanosecondsPerTick = 100;

    /// <summary>The largest valid FILETIME: the FILETIME of <see cref="DateTime.MaxValue"/>.</summary>
    public const long MaxFileTime = 3_155_378_975_999_999_999 - FileTimeEpochTicks;

    /// <summary>Ticks per second of <see cref="GetTimestamp"/>.</summary>
    public static long Frequency => Stopwatch.Frequency;

    /// <summary>A monotonic timestamp in units of <see cref="Frequency"/>.</summary>
    /// <remarks>Allocation-free; cost is one read of the performance counter.</remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static long GetTimestamp() => Stopwatch.GetTimestamp();

    /// <summary>The time elapsed since <paramref name="startTimestamp"/>.</summary>
    /// <remarks>Tick-exact: uses 128-bit intermediate arithmetic rather than a double.</remarks>
    public static TimeSpan GetElapsedTime(long startTimestamp) => GetElapsedTime(startTimestamp, GetTimestamp());

    /// <summary>The time between two timestamps from <see cref="GetTimestamp"/>.</summary>
    /// <remarks>Negative when <paramref name="endTimestamp"/> precedes <paramref name="startTimestamp"/>.</remarks>
    public static TimeSpan GetElapsedTime(long startTimestamp, long endTimestamp)
        => new(ScaleExact(endTimestamp - startTimestamp, TimeSpan.TicksPerSecond, Frequency));

    /// <summary>Converts a timestamp difference to nanoseconds, truncating toward zero.</summary>
    /// <exception cref="OverflowException">The result does not fit in 64 bits.</exception>
    public static long TimestampToNanoseconds(long timestampTicks)
        => ScaleExact(timestampTicks, 1_000_000_000, Frequency);

    /// <summary>Converts nanoseconds to a timestamp difference, truncating toward zero.</summary>
    /// <exception cref="OverflowException">The result does not fit in 64 bits.</exception>
    public static long NanosecondsToTimestamp(long nanoseconds)
        => ScaleExact(nanoseconds, Frequency, 1_000_000_000);

    /// <summary>Converts a UTC instant to a Windows FILETIME (100-ns intervals since 1601-01-01 UTC).</summary>
    /// <exception cref="ArgumentOutOfRangeException">The instant is before 1601-01-01.</exception>
    /// <exception cref="ArgumentException">The instant's kind is <see cref="DateTimeKind.Local"/>.</exception>
    public static long ToFileTime(DateTime utc)
    {
        RejectLocal(utc);
        long fileTime = utc.Ticks - FileTimeEpochTicks;
        if (fileTime < 0)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(utc), utc, "FILETIME cannot represent instants before 1601-01-01T00:00:00Z.");
        }
        return fileTime;
    }

    /// <summary>Converts a Windows FILETIME to a UTC <see cref="DateTime"/>; exact, since both count 100-ns ticks.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="fileTime"/> is negative or past <see cref="MaxFileTime"/>.</exception>
    public static DateTime FromFileTime(long fileTime)
    {
        if ((ulong)fileTime > MaxFileTime)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(fileTime), fileTime, $"A FILETIME must lie in [0, {MaxFileTime}] to be a DateTime.");
        }
        return new DateTime(fileTime + FileTimeEpochTicks, DateTimeKind.Utc);
    }

    /// <summary>Converts a UTC instant to nanoseconds since the Unix epoch.</summary>
    /// <remarks>A 64-bit nanosecond count spans 1677-09-21 to 2262-04-11; instants outside it are rejected.</remarks>
    /// <exception cref="ArgumentOutOfRangeException">The instant is outside the 64-bit nanosecond range.</exception>
    /// <exception cref="ArgumentException">The instant's kind is <see cref="DateTimeKind.Local"/>.</exception>
    public static long ToUnixNanoseconds(DateTime utc)
    {
        RejectLocal(utc);
        long ticks = utc.Ticks - UnixEpochTicks;
        if (ticks > long.MaxValue / NanosecondsPerTick || ticks < long.MinValue / NanosecondsPerTick)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(utc), utc, "Unix nanoseconds in 64 bits span 1677-09-21 to 2262-04-11.");
        }
        return ticks * NanosecondsPerTick;
    }

    /// <summary>Converts nanoseconds since the Unix epoch to a UTC <see cref="DateTime"/>.</summary>
    /// <remarks>
    /// A tick is 100 ns, so the sub-tick remainder is dropped by rounding toward negative infinity
    /// (the instant is never moved later). Every <see cref="long"/> maps into the DateTime range.
    /// </remarks>
    public static DateTime FromUnixNanoseconds(long unixNanoseconds)
        => new(UnixEpochTicks + FloorDiv(unixNanoseconds, NanosecondsPerTick), DateTimeKind.Utc);

    /// <summary>Converts a FILETIME to nanoseconds since the Unix epoch.</summary>
    /// <exception cref="ArgumentOutOfRangeException">The FILETIME is invalid or outside the 64-bit nanosecond range.</exception>
    public static long FileTimeToUnixNanoseconds(long fileTime) => ToUnixNanoseconds(FromFileTime(fileTime));

    /// <summary>Converts nanoseconds since the Unix epoch to a FILETIME, rounding toward negative infinity to 100 ns.</summary>
    public static long UnixNanosecondsToFileTime(long unixNanoseconds) => ToFileTime(FromUnixNanoseconds(unixNanoseconds));

    /// <summary>The current UTC time as nanoseconds since the Unix epoch, without allocating.</summary>
    public static long UtcNowUnixNanoseconds() => ToUnixNanoseconds(DateTime.UtcNow);

    /// <summary>The current UTC time as a FILETIME, without allocating.</summary>
    public static long UtcNowFileTime() => DateTime.UtcNow.Ticks - FileTimeEpochTicks;

    private static void RejectLocal(DateTime value)
    {
        if (value.Kind == DateTimeKind.Local)
        {
            ThrowHelper.ThrowArgument(nameof(value), "A local DateTime is ambiguous around daylight-saving changes; pass a UTC value (ToUniversalTime()).");
        }
    }

    private static long FloorDiv(long value, long divisor)
    {
        long quotient = Math.DivRem(value, divisor, out long remainder);
        return remainder < 0 ? quotient - 1 : quotient;
    }

    /// <summary>value * multiplier / divisor with a 128-bit intermediate, truncating toward zero.</summary>
    private static long ScaleExact(long value, long multiplier, long divisor)
    {
        if (multiplier == divisor)
        {
            return value;
        }
        Int128 product = (Int128)value * multiplier;
        return checked((long)(product / divisor));
    }
}
