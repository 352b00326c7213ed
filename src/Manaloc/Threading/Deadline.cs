using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Manaloc.Threading;

/// <summary>
/// A point in time on a monotonic clock after which something should stop: a value type over one
/// timestamp, so creating, copying and polling it never allocates.
/// </summary>
/// <remarks>
/// <para>
/// Why: a monotonic timestamp read allocates nothing, so a deadline can stay a plain value: cheap to create in large numbers
/// (no timer, nothing to dispose), and a poll is one clock read and a compare. Poll it where a
/// clock read per check is acceptable; where a hot loop polls millions of times per second and
/// only one deadline exists, a <see cref="ScheduledValue{T}"/> poll (one volatile read) is cheaper.
/// </para>
/// <para>
/// The timestamp comes from <see cref="TimeProvider.GetTimestamp"/> of the provider given (the
/// system clock by default, read directly through <see cref="Stopwatch.GetTimestamp"/> to skip a
/// virtual call), so it is monotonic, unaffected by wall-clock changes, and tests can use a fake
/// provider. The timeout is rounded up to the clock's unit, so on a coarse clock a deadline expires
/// at or after the time asked, never before. A due time beyond the clock's range saturates to "never".
/// <c>default(Deadline)</c> equals <see cref="Infinite"/>: it never expires and reads no clock.
/// </para>
/// <para>Thread safety: immutable; safe to share and poll from any thread.</para>
/// </remarks>
public readonly struct Deadline : IEquatable<Deadline>
{
    private readonly TimeProvider? _provider; // null: never expires
    private readonly long _due;               // in _provider's timestamp units

    private Deadline(TimeProvider provider, long due)
    {
        _provider = provider;
        _due = due;
    }

    /// <summary>A deadline that never expires.</summary>
    public static Deadline Infinite => default;

    /// <summary>A deadline <paramref name="timeout"/> from now on <paramref name="timeProvider"/>'s clock.</summary>
    /// <param name="timeout">Non-negative, or <see cref="Timeout.InfiniteTimeSpan"/> for <see cref="Infinite"/>.</param>
    /// <param name="timeProvider">The clock; <see cref="TimeProvider.System"/> when null.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="timeout"/> is negative and not infinite.</exception>
    public static Deadline After(TimeSpan timeout, TimeProvider? timeProvider = null)
    {
        if (timeout == Timeout.InfiniteTimeSpan)
        {
            return Infinite;
        }
        if (timeout < TimeSpan.Zero)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(timeout), timeout, "A deadline's timeout is zero or more, or Timeout.InfiniteTimeSpan.");
        }
        var provider = timeProvider ?? TimeProvider.System;
        bool system = ReferenceEquals(provider, TimeProvider.System);
        long now = system ? Stopwatch.GetTimestamp() : provider.GetTimestamp();
        long span = ToTimestampTicks(timeout.Ticks, system ? Stopwatch.Frequency : provider.TimestampFrequency);
        // now + span >= long.MaxValue, written so it cannot overflow: span is never negative, while a
        // custom provider's now may be (long.MaxValue - now would wrap).
        return now >= long.MaxValue - span ? Infinite : new Deadline(provider, now + span);
    }

    /// <summary><paramref name="ticks"/> × <paramref name="frequency"/> / TicksPerSecond, rounded up (a deadline is never earlier than asked), saturating at <see cref="long.MaxValue"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static long ToTimestampTicks(long ticks, long frequency)
    {
        // Common clocks first, in 64-bit arithmetic: 1 GHz (Linux, macOS) and 10 MHz (Windows, TimeSpan ticks).
        if (frequency == TimeSpan.TicksPerSecond) return ticks;
        if (frequency % TimeSpan.TicksPerSecond == 0)
        {
            long factor = frequency / TimeSpan.TicksPerSecond;
            return ticks > long.MaxValue / factor ? long.MaxValue : ticks * factor;
        }
        // Any other frequency (a millisecond clock, a 3.579545 MHz ACPI timer): 128-bit intermediate, so no
        // overflow, rounded up to the clock's next unit, so the deadline never falls before the timeout.
        Int128 scaled = ((Int128)ticks * frequency + TimeSpan.TicksPerSecond - 1) / TimeSpan.TicksPerSecond;
        return scaled >= long.MaxValue ? long.MaxValue : (long)scaled;
    }

    /// <summary>True once the deadline has passed. One clock read and a compare; never allocates.</summary>
    public bool IsExpired
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get
        {
            var provider = _provider;
            if (provider is null) return false;
            long now = ReferenceEquals(provider, TimeProvider.System) ? Stopwatch.GetTimestamp() : provider.GetTimestamp();
            return now >= _due;
        }
    }

    /// <summary>True for <see cref="Infinite"/>.</summary>
    public bool IsInfinite => _provider is null;

    /// <summary>Time left: zero once expired, <see cref="Timeout.InfiniteTimeSpan"/> for <see cref="Infinite"/>.</summary>
    /// <remarks>
    /// Suitable as a wait timeout (<c>event.Wait(deadline.Remaining)</c>) up to about 24.8 days:
    /// most wait APIs refuse more than <see cref="int.MaxValue"/> milliseconds with
    /// <see cref="ArgumentOutOfRangeException"/>. It is not clamped, since a wait that times out at
    /// the clamp would look like an expired deadline; for longer deadlines wait in slices and
    /// re-check <see cref="IsExpired"/>.
    /// </remarks>
    public TimeSpan Remaining
    {
        get
        {
            var provider = _provider;
            if (provider is null) return Timeout.InfiniteTimeSpan;
            long left = _due - provider.GetTimestamp();
            if (left <= 0) return TimeSpan.Zero;
            Int128 ticks = (Int128)left * TimeSpan.TicksPerSecond / provider.TimestampFrequency;
            // Round up so a wait for Remaining never ends before the deadline.
            if ((Int128)left * TimeSpan.TicksPerSecond % provider.TimestampFrequency != 0) ticks += 1;
            return ticks >= TimeSpan.MaxValue.Ticks ? TimeSpan.MaxValue : new TimeSpan((long)ticks);
        }
    }

    /// <inheritdoc/>
    public bool Equals(Deadline other) => ReferenceEquals(_provider, other._provider) && _due == other._due;

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is Deadline other && Equals(other);

    /// <inheritdoc/>
    public override int GetHashCode() => HashCode.Combine(_provider, _due);

    /// <summary>Equality: same clock and same due timestamp.</summary>
    public static bool operator ==(Deadline left, Deadline right) => left.Equals(right);

    /// <summary>Inequality.</summary>
    public static bool operator !=(Deadline left, Deadline right) => !left.Equals(right);

    /// <inheritdoc/>
    public override string ToString() => IsInfinite ? "Deadline(infinite)" : IsExpired ? "Deadline(expired)" : $"Deadline(in {Remaining})";
}
