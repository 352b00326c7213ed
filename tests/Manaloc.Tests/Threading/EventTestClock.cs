namespace Manaloc.Tests.Threading;

/// <summary>
/// A manual TimeProvider for the event tests: time moves only when <see cref="Advance"/> is called,
/// which fires the timers that fall due on the calling thread.
/// </summary>
internal sealed class EventTestClock : TimeProvider
{
    private readonly object _gate = new();
    private readonly List<Timer> _timers = [];
    private long _ticks = TimeSpan.TicksPerDay;

    public override long TimestampFrequency => TimeSpan.TicksPerSecond;

    public override long GetTimestamp()
    {
        lock (_gate) return _ticks;
    }

    public override DateTimeOffset GetUtcNow()
    {
        lock (_gate) return new DateTimeOffset(_ticks, TimeSpan.Zero);
    }

    public int ActiveTimers
    {
        get { lock (_gate) return _timers.Count(t => t.DueAt != long.MaxValue); }
    }

    public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period)
    {
        var timer = new Timer(this, callback, state);
        timer.Change(dueTime, period);
        lock (_gate) _timers.Add(timer);
        return timer;
    }

    public void Advance(TimeSpan by)
    {
        List<Timer> due;
        lock (_gate)
        {
            _ticks += by.Ticks;
            due = _timers.Where(t => t.DueAt <= _ticks).ToList();
            foreach (var t in due) t.DueAt = t.Period > 0 ? _ticks + t.Period : long.MaxValue;
        }
        foreach (var t in due) t.Callback(t.State);
    }

    private sealed class Timer(EventTestClock clock, TimerCallback callback, object? state) : ITimer
    {
        public long DueAt = long.MaxValue;
        public long Period;
        public TimerCallback Callback => callback;
        public object? State => state;

        public bool Change(TimeSpan dueTime, TimeSpan period)
        {
            lock (clock._gate)
            {
                DueAt = dueTime == Timeout.InfiniteTimeSpan ? long.MaxValue : clock._ticks + dueTime.Ticks;
                Period = period == Timeout.InfiniteTimeSpan ? 0 : period.Ticks;
            }
            return true;
        }

        public void Dispose()
        {
            lock (clock._gate) clock._timers.Remove(this);
        }

        public ValueTask DisposeAsync()
        {
            Dispose();
            return ValueTask.CompletedTask;
        }
    }
}
