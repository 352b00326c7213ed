using Manaloc.Concurrency.Tests.Systematic;
using Microsoft.Coyote.Runtime;

namespace Manaloc.Concurrency.Tests.Mutants;

/// <summary>
/// A reader-writer lock on one state word (readers count up, a writer stores -1), with one
/// deliberate bug: a writer checks the word is free and then stores -1 with a plain write instead
/// of CompareExchange(0 → -1), so two writers (or a writer and a reader) can both get in.
/// </summary>
internal sealed class CheckThenStoreLock : IReaderWriterLock
{
    private int _state;

    public void EnterRead()
    {
        while (true)
        {
            int state = Volatile.Read(ref _state);
            if (state >= 0 && Interlocked.CompareExchange(ref _state, state + 1, state) == state) return;
            SchedulingPoint.Yield();
        }
    }

    public void ExitRead() => Interlocked.Decrement(ref _state);

    public void EnterWrite()
    {
        while (Volatile.Read(ref _state) != 0) SchedulingPoint.Yield();
        Volatile.Write(ref _state, -1); // BUG: CompareExchange(ref _state, -1, 0) in a correct lock
    }

    public void ExitWrite() => Volatile.Write(ref _state, 0);
}
