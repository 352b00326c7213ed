namespace Manaloc.Threading;

/// <summary>
/// A value that flips from <see cref="Initial"/> to <see cref="Final"/> when a timer fires; reading
/// it is one volatile read, with no clock read and no allocation.
/// </summary>
/// <typeparam name="T">The value's type.</typeparam>
/// <remarks>
/// <para>
/// Why: an "are we still accepting work?" flag that every dequeue polls, possibly hundreds of
/// thousands of times per second, until a shutdown deadline. Polling a clock per check costs a clock read each time; here the clock is
/// consulted once, by a <see cref="TimeProvider"/> timer, and polls read a flag. The price is a
/// timer per instance and the duty to <see cref="Dispose"/> it: for many rarely polled deadlines
/// a <see cref="Deadline"/> is the better trade.
/// </para>
/// <para>
/// Memory ordering: the two values are readonly fields written in the constructor; the state is
/// one int (pending, flipped, cancelled), after the constructor changed only by interlocked
/// operations (full fences), and
/// <see cref="Value"/> is a <see cref="Volatile.Read(ref readonly int)"/> of it, so a reader that
/// sees the flip sees the final value (which, being readonly, never tears even for large structs).
/// Once flipped it stays flipped. The timer's callback flips only a pending value (CAS) and
/// <see cref="Dispose"/> cancels only a pending one (CAS), so exactly one of them wins, even when
/// the callback is already running as Dispose is called. The timer fires on the provider's timer
/// thread, so the flip may be observed a little after the due time, never before: the due time is
/// fixed as a timestamp on the provider's clock when the instance is created, the timer is armed in
/// whole milliseconds rounded up, and a callback that finds the clock short of the due time (timers
/// count on a coarser clock and may fire up to a millisecond early) re-arms for the rest.
/// </para>
/// <para>Thread safety: every member is safe to call from any thread.</para>
/// </remarks>
public sealed class ScheduledValue<T> : IDisposable
{
    private readonly T _initial;
    private readonly T _final;
    private readonly ITimer? _timer;
    private readonly TimeProvider? _clock; // set with _timer
    private readonly long _due;            // _clock's timestamp at which the value may flip, rounded up
    private const int Pending = 0, Flipped = 1, Cancelled = 2;
    private int _state; // Pending until the timer flips it, FlipNow flips it, or Dispose cancels it; Flipped is final

    /// <summary>Holds <paramref name="initial"/> until <paramref name="delay"/> has passed on <paramref name="timeProvider"/>'s clock, then <paramref name="final"/>.</summary>
    /// <param name="initial">The value before the flip.</param>
    /// <param name="final">The value after the flip.</param>
    /// <param name="delay">Zero or more (zero flips at once), or <see cref="Timeout.InfiniteTimeSpan"/> to flip only through <see cref="FlipNow"/>.</param>
    /// <param name="timeProvider">The clock and timer; <see cref="TimeProvider.System"/> when null.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="delay"/> is negative and not infinite.</exception>
    public ScheduledValue(T initial, T final, TimeSpan delay, TimeProvider? timeProvider = null)
    {
        if (delay < TimeSpan.Zero && delay != Timeout.InfiniteTimeSpan)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(delay), delay, "A scheduled value's delay is zero or more, or Timeout.InfiniteTimeSpan.");
        }
        _initial = initial;
        _final = final;
        if (delay == TimeSpan.Zero)
        {
            _state = Flipped;
        }
        else if (delay != Timeout.InfiniteTimeSpan)
        {
            var provider = timeProvider ?? TimeProvider.System;
            _clock = provider;
            _due = SaturatingAdd(provider.GetTimestamp(), ToTimestampTicksRoundedUp(delay.Ticks, provider.TimestampFrequency));
            // The timer's state is this instance, and a scheduled timer is rooted by its provider
            // (the system timer queue for TimeProvider.System): an undisposed instance stays
            // reachable, even if nobody polls it any more, until the timer fires or Dispose stops it.
            // Created unarmed, then armed: a callback that runs at once finds _timer assigned.
            _timer = provider.CreateTimer(static s => ((ScheduledValue<T>)s!).OnDue(), this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
            _timer.Change(TimerDueTime(delay.Ticks), Timeout.InfiniteTimeSpan);
        }
    }

    /// <summary>The value before the flip.</summary>
    public T Initial => _initial;

    /// <summary>The value after the flip.</summary>
    public T Final => _final;

    /// <summary>True once the value has flipped.</summary>
    public bool IsFlipped => Volatile.Read(ref _state) == Flipped; // acquire: pairs with the interlocked flip

    /// <summary><see cref="Initial"/> until the timer fires, <see cref="Final"/> from then on. One volatile read.</summary>
    public T Value => Volatile.Read(ref _state) == Flipped ? _final : _initial; // acquire: pairs with the interlocked flip

    /// <summary>Flips now (if not flipped yet, also after <see cref="Dispose"/>) and stops the timer.</summary>
    public void FlipNow()
    {
        Interlocked.Exchange(ref _state, Flipped); // full fence: readers that see Flipped choose _final
        _timer?.Dispose();
    }

    /// <summary>Stops the timer and cancels a flip that has not happened yet: once this returns, the value no longer flips by itself.</summary>
    /// <remarks>A timer callback already running when this is called flips the value only if its compare-and-swap of the pending state comes first; once this returns the callback cannot flip it, and only <see cref="FlipNow"/> can.</remarks>
    public void Dispose()
    {
        Interlocked.CompareExchange(ref _state, Cancelled, Pending); // loses only to a flip that already happened
        _timer?.Dispose();
    }

    private void OnDue()
    {
        if (Volatile.Read(ref _state) != Pending) return; // a hint: the CAS below decides
        // A timer may fire before the due time on the provider's own clock: System.Threading.Timer
        // counts whole milliseconds on a coarser clock than GetTimestamp. Never flip early: re-arm
        // for what is left (rounded up to a millisecond, so a coarse timer cannot spin at zero).
        long left = _due - _clock!.GetTimestamp();
        if (left > 0)
        {
            try
            {
                _timer!.Change(TimerDueTime(ToTimeSpanTicksRoundedUp(left, _clock.TimestampFrequency)), Timeout.InfiniteTimeSpan);
            }
            catch (ObjectDisposedException)
            {
                // Dispose or FlipNow stopped the timer meanwhile: nothing left to do.
            }
            return;
        }
        Interlocked.CompareExchange(ref _state, Flipped, Pending); // loses only to Dispose (or an earlier flip)
        _timer?.Dispose();
    }

    /// <summary>Largest due time System.Threading.Timer accepts (0xfffffffe ms); a longer delay re-arms when it fires.</summary>
    private const long MaxTimerTicks = 0xfffffffeL * TimeSpan.TicksPerMillisecond;

    /// <summary>A due time in whole milliseconds, rounded up (timers truncate to milliseconds), capped at what a timer accepts.</summary>
    private static TimeSpan TimerDueTime(long ticks)
    {
        long ms = ticks / TimeSpan.TicksPerMillisecond + (ticks % TimeSpan.TicksPerMillisecond != 0 ? 1 : 0);
        return ms >= MaxTimerTicks / TimeSpan.TicksPerMillisecond ? TimeSpan.FromTicks(MaxTimerTicks) : TimeSpan.FromMilliseconds(Math.Max(ms, 1));
    }

    /// <summary><paramref name="ticks"/> (TimeSpan ticks) in timestamp units of <paramref name="frequency"/>, rounded up, saturating.</summary>
    private static long ToTimestampTicksRoundedUp(long ticks, long frequency)
    {
        Int128 scaled = ((Int128)ticks * frequency + TimeSpan.TicksPerSecond - 1) / TimeSpan.TicksPerSecond;
        return scaled >= long.MaxValue ? long.MaxValue : (long)scaled;
    }

    /// <summary><paramref name="timestampTicks"/> of <paramref name="frequency"/> in TimeSpan ticks, rounded up, saturating.</summary>
    private static long ToTimeSpanTicksRoundedUp(long timestampTicks, long frequency)
    {
        Int128 scaled = ((Int128)timestampTicks * TimeSpan.TicksPerSecond + frequency - 1) / frequency;
        return scaled >= long.MaxValue ? long.MaxValue : (long)scaled;
    }

    private static long SaturatingAdd(long now, long span) => now >= long.MaxValue - span ? long.MaxValue : now + span;

    /// <inheritdoc/>
    public override string ToString() => $"{Value} ({(IsFlipped ? "flipped" : "not flipped yet")})";
}
