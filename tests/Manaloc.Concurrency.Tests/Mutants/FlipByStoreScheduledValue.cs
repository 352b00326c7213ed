using Manaloc.Concurrency.Tests.Systematic;

namespace Manaloc.Concurrency.Tests.Mutants;

/// <summary>
/// ScheduledValue's state machine (Pending, Flipped, Cancelled) with one deliberate bug: the timer
/// callback stores Flipped instead of a compare-exchange from Pending, so a timer that fires after
/// Dispose cancelled it still flips the value.
/// </summary>
internal sealed class FlipByStoreScheduledValue : IScheduledFlag
{
    private const int Pending = 0, Flipped = 1, Cancelled = 2;
    private int _state;
    private readonly ITimer _timer;

    public FlipByStoreScheduledValue(TimeProvider clock)
        => _timer = clock.CreateTimer(static s => ((FlipByStoreScheduledValue)s!).OnDue(), this, TimeSpan.FromSeconds(1), Timeout.InfiniteTimeSpan);

    public bool Value => Volatile.Read(ref _state) == Flipped;
    public bool IsFlipped => Volatile.Read(ref _state) == Flipped;

    public void Dispose()
    {
        Interlocked.CompareExchange(ref _state, Cancelled, Pending);
        _timer.Dispose();
    }

    private void OnDue() => Volatile.Write(ref _state, Flipped); // BUG: CompareExchange(ref _state, Flipped, Pending)
}
