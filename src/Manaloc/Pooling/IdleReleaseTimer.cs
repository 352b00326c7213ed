using System.Diagnostics;

namespace Manaloc.Pooling;

/// <summary>
/// The timer of a pool's (or buffer manager's) idle release: calls <c>tick(target)</c> twice per idle period
/// on a <see cref="TimeProvider"/> timer for as long as the target lives and the timer is not disposed.
/// </summary>
/// <remarks>
/// Twice per period, with demand counted over the last two ticks (<see cref="RentWindow"/>): a pool idle for
/// a whole period is released at most half a period later, so within 1.5 periods of its last rent (one tick
/// per period would take up to two).
/// The timer holds this object and this object holds the target weakly, so a pool dropped without
/// Dispose is still collected; the first tick after that disposes the timer. Ticks never overlap (a
/// tick that finds the previous one still running is skipped), so the tick needs no lock of its own
/// against itself. The execution context is not captured (a timer made inside a request must not keep
/// its async-locals alive). Thread safety: <see cref="Dispose"/> is idempotent and safe from any thread;
/// a tick may still be running when Dispose returns (the pool's tick checks its disposed flag).
/// </remarks>
internal sealed class IdleReleaseTimer : IDisposable
{
    private readonly WeakReference<object> _target;
    private readonly Action<object> _tick;
    private readonly ITimer _timer;
    private int _running;
    private int _disposed;

    private IdleReleaseTimer(object target, Action<object> tick, TimeSpan period, TimeProvider clock)
    {
        _target = new WeakReference<object>(target);
        _tick = tick;
        bool restore = !ExecutionContext.IsFlowSuppressed();
        var suppressed = restore ? ExecutionContext.SuppressFlow() : default;
        try
        {
            _timer = clock.CreateTimer(static state => ((IdleReleaseTimer)state!).Tick(), this, period, period);
        }
        finally
        {
            if (restore) suppressed.Undo();
        }
    }

    /// <summary>Starts the timer, or returns null when <paramref name="period"/> is <see cref="Timeout.InfiniteTimeSpan"/> (off).</summary>
    public static IdleReleaseTimer? Start(object target, Action<object> tick, TimeSpan period, TimeProvider clock)
        => period == Timeout.InfiniteTimeSpan ? null : new IdleReleaseTimer(target, tick, TimeSpan.FromTicks(Math.Max(period.Ticks / 2, TimeSpan.TicksPerMillisecond)), clock);

    private void Tick()
    {
        if (Volatile.Read(ref _disposed) != 0) return;
        if (!_target.TryGetTarget(out var target))
        {
            Dispose(); // the pool was collected without Dispose
            return;
        }
        if (Interlocked.Exchange(ref _running, 1) != 0) return; // the previous tick still runs: skip this one (orders nothing else)
        try
        {
            _tick(target);
        }
        catch (Exception e) // a timer thread must not take the process down; releases drop objects quietly, so only a bug lands here
        {
            Debug.Fail($"Idle release failed: {e}");
        }
        finally
        {
            Volatile.Write(ref _running, 0);
        }
    }

    /// <summary>Stops the timer (idempotent).</summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 0) _timer.Dispose(); // the first caller disposes
    }
}

/// <summary>
/// Rents seen over the last two idle checks (one idle period): each check passes the rent counter and gets
/// back how many rents happened since the check before the previous one.
/// </summary>
/// <remarks>Written by the idle check only (its ticks never overlap, or under the owner's lock).</remarks>
internal struct RentWindow
{
    private long _last, _previous;

    /// <summary>Records <paramref name="rents"/> (a running total) and returns the rents since two checks ago.</summary>
    public long Advance(long rents)
    {
        long since = rents - _previous;
        _previous = _last;
        _last = rents;
        return since;
    }
}
