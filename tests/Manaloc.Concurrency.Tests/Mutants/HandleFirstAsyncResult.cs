using Manaloc.Concurrency.Tests.Systematic;

namespace Manaloc.Concurrency.Tests.Mutants;

/// <summary>
/// LazyAsyncResult's completion protocol with one deliberate bug: the completer reads the handle
/// before it publishes Completed (LazyAsyncResult publishes first, with a full fence, then reads).
/// A handle created between the read and the publish sees "not completed" and is never signalled.
/// </summary>
internal sealed class HandleFirstAsyncResult : IAsyncCompletion
{
    private int _completed;
    private int _result;
    private ManualResetEvent? _handle;

    public void Complete(int result)
    {
        _result = result;
        var handle = Volatile.Read(ref _handle); // BUG: must come after the Exchange below
        Interlocked.Exchange(ref _completed, 1);
        handle?.Set();
    }

    public WaitHandle Handle
    {
        get
        {
            var existing = Volatile.Read(ref _handle);
            if (existing is not null) return existing;
            var created = new ManualResetEvent(false);
            var winner = Interlocked.CompareExchange(ref _handle, created, null);
            if (winner is not null) return winner;
            if (Volatile.Read(ref _completed) == 1) created.Set();
            return created;
        }
    }

    public int End() => Volatile.Read(ref _result);
}
