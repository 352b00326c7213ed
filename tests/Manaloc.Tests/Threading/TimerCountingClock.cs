using Microsoft.Extensions.Time.Testing;

namespace Manaloc.Tests.Threading;

/// <summary>
/// Microsoft.Extensions.TimeProvider.Testing's manual clock, plus the one thing it does not show:
/// how many of the timers it handed out are still live (created and not yet disposed), so tests can
/// check that a component stops its timer. Time moves only through <c>Advance</c>, which fires due
/// timers on the calling thread.
/// </summary>
internal sealed class TimerCountingClock : FakeTimeProvider
{
    private int _activeTimers;

    /// <summary>Timers created and not yet disposed.</summary>
    public int ActiveTimers => Volatile.Read(ref _activeTimers);

    public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period)
    {
        Interlocked.Increment(ref _activeTimers);
        return new CountedTimer(this, base.CreateTimer(callback, state, dueTime, period));
    }

    private sealed class CountedTimer(TimerCountingClock owner, ITimer inner) : ITimer
    {
        private int _disposed;

        public bool Change(TimeSpan dueTime, TimeSpan period) => inner.Change(dueTime, period);

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _disposed, 1) == 0) Interlocked.Decrement(ref owner._activeTimers);
            inner.Dispose();
        }

        public ValueTask DisposeAsync()
        {
            Dispose();
            return default;
        }
    }
}
