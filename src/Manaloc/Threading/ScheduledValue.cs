namespace Manaloc.Threading;

/// <summary>
/// A value that flips from <see cref="Initial"/> to <see cref="Final"/> when a timer fires; reading
/// it is one volatile read, with no clock read and no allocation.
/// </summary>
/// <typeparam name="T">The value's type.</typeparam>
/// <remarks>
/// <para>
/// Why: seed 002 ("Tradeoffs in High Performance Software") needed an "are we still accepting
/// work?" flag that every dequeue polls hundreds of thousands of times per second, until a
/// shutdown deadline. Polling a clock per check costs a clock read each time; here the clock is
/// consulted once, by a <see cref="TimeProvider"/> timer, and polls read a flag. The price is a
/// timer per instance and the duty to <see cref="Dispose"/> it: for many rarely polled deadlines
/// a <see cref="Deadline"/> is the better trade.
/// </para>
/// <para>
/// Memory ordering: the two values are readonly fields written in the constructor; the flip is a
/// <see cref="Volatile.Write(ref int, int)"/> of a flag, and <see cref="Value"/> is a
/// <see cref="Volatile.Read(ref readonly int)"/> of it, so a reader that sees the flip sees the
/// final value (which, being readonly, never tears even for large structs). Once flipped it stays
/// flipped. The timer fires on the provider's timer thread, so the flip may be observed a little
/// after the due time, never before.
/// </para>
/// <para>Thread safety: every member is safe to call from any thread.</para>
/// </remarks>
public sealed class ScheduledValue<T> : IDisposable
{
    private readonly T _initial;
    private readonly T _final;
    private readonly ITimer? _timer;
    private int _flipped; // 0 until the timer fires or FlipNow runs; then 1 forever

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
            _flipped = 1;
        }
        else if (delay != Timeout.InfiniteTimeSpan)
        {
            // The timer holds this instance as its state and this instance holds the timer: an
            // instance nobody can poll any more may be collected together with its timer.
            _timer = (timeProvider ?? TimeProvider.System).CreateTimer(static s => ((ScheduledValue<T>)s!).FlipNow(), this, delay, Timeout.InfiniteTimeSpan);
        }
    }

    /// <summary>The value before the flip.</summary>
    public T Initial => _initial;

    /// <summary>The value after the flip.</summary>
    public T Final => _final;

    /// <summary>True once the value has flipped.</summary>
    public bool IsFlipped => Volatile.Read(ref _flipped) != 0; // pairs with the Volatile.Write in FlipNow

    /// <summary><see cref="Initial"/> until the timer fires, <see cref="Final"/> from then on. One volatile read.</summary>
    public T Value => Volatile.Read(ref _flipped) != 0 ? _final : _initial; // acquire: pairs with FlipNow's release

    /// <summary>Flips now (if not flipped yet) and stops the timer.</summary>
    public void FlipNow()
    {
        Volatile.Write(ref _flipped, 1); // release: readers that see 1 choose _final
        _timer?.Dispose();
    }

    /// <summary>Stops the timer. The value stays what it is now: disposing before the due time cancels the flip.</summary>
    public void Dispose() => _timer?.Dispose();

    /// <inheritdoc/>
    public override string ToString() => $"{Value} ({(IsFlipped ? "flipped" : "not flipped yet")})";
}
