namespace Manaloc.Tests.Threading;

/// <summary>
/// A manual clock for tests (Microsoft.Extensions.TimeProvider.Testing does not restore here), shared by every test that waits or expires:
/// time moves only through <see cref="Advance"/>, which fires due timers in due order on the
/// calling thread. Timestamps tick in <see cref="TimeSpan"/> ticks.
/// </summary>
internal sealed class FakeTimeProvider : TimeProvider
{
    private readonly object _lock = new();
    private readonly List<FakeTimer> _timers = [];
    private readonly DateTimeOffset _epoch = new(2026, 1, 1, 0, 0, 0, TimeSpan.Zero);
    private long _now = TimeSpan.TicksPerDay; // not zero, so "timestamp 0" bugs show

    public override long TimestampFrequency => TimeSpan.TicksPerSecond;

    public override long GetTimestamp() => Interlocked.Read(ref _now);

    public override DateTimeOffset GetUtcNow() => _epoch + TimeSpan.FromTicks(GetTimestamp());

    public int ActiveTimers
    {
        get { lock (_lock) return _timers.Count; }
    }

    public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period)
    {
        var timer = new FakeTimer(this, callback, state);
        timer.Change(dueTime, period);
        return timer;
    }

    /// <summary>Moves time forward by <paramref name="by"/>, firing every timer that falls due on the way.</summary>
    public void Advance(TimeSpan by)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(by, TimeSpan.Zero);
        long target;
        lock (_lock) target = _now + by.Ticks;
        while (true)
        {
            FakeTimer? next;
            lock (_lock)
            {
                next = _timers.Where(t => t.Due <= target).MinBy(t => t.Due);
                if (next is null)
                {
                    Interlocked.Exchange(ref _now, target);
                    return;
                }
                Interlocked.Exchange(ref _now, Math.Max(_now, next.Due));
                if (next.Period > 0) next.Due += next.Period;
                else _timers.Remove(next);
            }
            next.Fire();
        }
    }

    private void Schedule(FakeTimer timer, TimeSpan dueTime, TimeSpan period)
    {
        bool fireNow = false;
        lock (_lock)
        {
            _timers.Remove(timer);
            if (dueTime == Timeout.InfiniteTimeSpan) return;
            timer.Due = _now + dueTime.Ticks;
            timer.Period = period == Timeout.InfiniteTimeSpan ? 0 : period.Ticks;
            if (dueTime == TimeSpan.Zero && timer.Period == 0) fireNow = true;
            else _timers.Add(timer);
        }
        if (fireNow) ThreadPool.UnsafeQueueUserWorkItem(static t => t.Fire(), timer, preferLocal: false);
    }

    private void Cancel(FakeTimer timer)
    {
        lock (_lock) _timers.Remove(timer);
    }

    private sealed class FakeTimer(FakeTimeProvider owner, TimerCallback callback, object? state) : ITimer
    {
        private bool _disposed;
        public long Due;
        public long Period;

        public void Fire()
        {
            if (!Volatile.Read(ref _disposed)) callback(state);
        }

        public bool Change(TimeSpan dueTime, TimeSpan period)
        {
            if (Volatile.Read(ref _disposed)) return false;
            owner.Schedule(this, dueTime, period);
            return true;
        }

        public void Dispose()
        {
            Volatile.Write(ref _disposed, true);
            owner.Cancel(this);
        }

        public ValueTask DisposeAsync()
        {
            Dispose();
            return default;
        }
    }
}
