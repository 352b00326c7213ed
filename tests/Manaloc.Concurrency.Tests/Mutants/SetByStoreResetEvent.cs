using Manaloc.Concurrency.Tests.Systematic;

namespace Manaloc.Concurrency.Tests.Mutants;

/// <summary>
/// EconomicResetEvent's state machine (Unset, Signaled, Waiting; park = kernel auto-reset event)
/// with one deliberate bug: Set decides on a plain read and then stores Signaled, instead of a
/// compare-exchange from Unset. A waiter that claims Waiting between the read and the store has
/// its claim overwritten: nobody sets the park, and the waiter sleeps with the event set.
/// </summary>
internal sealed class SetByStoreResetEvent : ISignal
{
    private const int Unset = 0, Signaled = 1, Waiting = 2;
    private int _state;
    private readonly AutoResetEvent _park = new(false);

    public bool IsSet => Volatile.Read(ref _state) == Signaled;

    public void Set()
    {
        if (Volatile.Read(ref _state) == Waiting && Interlocked.CompareExchange(ref _state, Unset, Waiting) == Waiting)
        {
            _park.Set();
            return;
        }
        Volatile.Write(ref _state, Signaled); // BUG: CompareExchange(ref _state, Signaled, Unset), and hand over if it saw Waiting
    }

    public void Wait()
    {
        while (true)
        {
            if (Interlocked.CompareExchange(ref _state, Unset, Signaled) == Signaled) return;
            if (Interlocked.CompareExchange(ref _state, Waiting, Unset) == Unset) break;
        }
        _park.WaitOne();
    }
}
