using System.Threading.Tasks.Sources;
using Manaloc.Concurrency.Tests.Systematic;

namespace Manaloc.Concurrency.Tests.Mutants;

/// <summary>
/// ReusableValueTaskSource's completion protocol (that of ManualResetValueTaskSourceCore: one
/// continuation slot, completion exchanges a sentinel into it, registration compare-exchanges the
/// continuation in) with one deliberate bug: the registration does not look at what its
/// compare-exchange found. When the completion landed after the consumer saw "pending" but before
/// it registered, the slot already holds the sentinel: the continuation must run now, and here it
/// never runs. A continuation registered in time runs inline on the completing thread (the core's
/// behaviour without a captured context; posting it from this rewritten code would be a call Coyote
/// does not control).
/// </summary>
internal sealed class NoRecheckValueTaskSource : IReusableSource
{
    private static readonly Action<object?> CompletedSentinel = static _ => { };
    private Action<object?>? _continuation;
    private object? _state;
    private int _result, _completed;
    private short _version;

    public short Version => _version;

    public ValueTaskSourceStatus GetStatus(short token)
    {
        CheckToken(token);
        return Volatile.Read(ref _completed) == 1 ? ValueTaskSourceStatus.Succeeded : ValueTaskSourceStatus.Pending;
    }

    public int GetResult(short token)
    {
        CheckToken(token);
        if (Volatile.Read(ref _completed) != 1) throw new InvalidOperationException("not completed");
        return _result;
    }

    public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
    {
        CheckToken(token);
        _state = state;
        Interlocked.CompareExchange(ref _continuation, continuation, null); // BUG: if it found CompletedSentinel, run the continuation now
    }

    public void SetResult(int result)
    {
        _result = result;
        Volatile.Write(ref _completed, 1);
        var continuation = Interlocked.Exchange(ref _continuation, CompletedSentinel);
        continuation?.Invoke(_state);
    }

    public void Reset()
    {
        _version++;
        _completed = 0;
        _continuation = null;
        _state = null;
    }

    private void CheckToken(short token)
    {
        if (token != _version) throw new InvalidOperationException("a token of an earlier operation");
    }
}
