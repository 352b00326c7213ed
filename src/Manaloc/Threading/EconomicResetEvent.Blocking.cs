using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Manaloc.Threading;

/// <summary>The waiter's slow path: spin, claim the Waiting state, block, withdraw on timeout or cancellation.</summary>
public sealed partial class EconomicResetEvent
{
    private static long s_blockedWaits;

    /// <summary>How many waits, over all events in the process, had to block (for metrics and tests).</summary>
    internal static long BlockedWaits => Interlocked.Read(ref s_blockedWaits);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool WaitSlow(int millisecondsTimeout, CancellationToken cancellationToken)
    {
        int state = Volatile.Read(ref _state); // a hint only: every decision below is taken by a CAS
        if (state == Disposed) EventThrowHelper.ThrowObjectDisposed(this);
        if (state == Waiting) EventThrowHelper.ThrowConcurrentWaiter();
        if (millisecondsTimeout == 0) return false;

        // Spin: a Set that lands within a few microseconds is caught without blocking.
        var spinner = new SpinWait();
        for (int i = 0; i < _spinCount; i++)
        {
            state = Volatile.Read(ref _state); // test before the test-and-set: no cache-line write while unset
            if (state == Signaled)
            {
                // Full fence, as in Wait's fast path.
                if (Interlocked.CompareExchange(ref _state, Unset, Signaled) == Signaled) return true;
                continue;
            }
            if (state != Unset) break; // Waiting or Disposed: the claim below reports it
            cancellationToken.ThrowIfCancellationRequested();
            spinner.SpinOnce(sleep1Threshold: -1);
        }

        var park = Volatile.Read(ref _park) ?? CreatePark(); // acquire: pairs with the CAS that published it
        while (true)
        {
            // Claim the right to block: Unset→Waiting. Full fence; from here a setter hands its signal to us.
            state = Interlocked.CompareExchange(ref _state, Waiting, Unset);
            if (state == Unset) break;
            if (state == Signaled)
            {
                if (Interlocked.CompareExchange(ref _state, Unset, Signaled) == Signaled) return true; // full fence
                continue;
            }
            if (state == Waiting) EventThrowHelper.ThrowConcurrentWaiter();
            EventThrowHelper.ThrowObjectDisposed(this);
        }
        Interlocked.Increment(ref s_blockedWaits); // statistics only
        return Block(park, millisecondsTimeout, cancellationToken);
    }

    private ManualResetEventSlim CreatePark()
    {
        // No spinning inside: we spun already. Losers of the race are dropped (no kernel handle was made).
        var created = new ManualResetEventSlim(false, spinCount: 0);
        // Full fence: publishes the park before this thread claims Waiting, so a setter that sees Waiting sees the park.
        return Interlocked.CompareExchange(ref _park, created, null) ?? created;
    }

    private bool Block(ManualResetEventSlim park, int millisecondsTimeout, CancellationToken cancellationToken)
    {
        bool woken;
        try
        {
            woken = ParkWait(park, millisecondsTimeout, cancellationToken);
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            if (TryWithdraw()) throw new OperationCanceledException(cancellationToken);
            return Consume(park); // a waker won the race: the signal is ours, not lost
        }
        if (!woken && TryWithdraw())
        {
            return false;
        }
        return Consume(park);
    }

    /// <summary>Gives up a claimed Waiting state; false when a setter or Dispose took it first.</summary>
    private bool TryWithdraw()
        => Interlocked.CompareExchange(ref _state, Unset, Waiting) == Waiting; // full fence; decides waker vs withdrawer

    private bool Consume(ManualResetEventSlim park)
    {
        // The waker took our Waiting state; its park.Set() is at most a few instructions away.
        park.Wait();
        if (Volatile.Read(ref _wokenByDispose)) EventThrowHelper.ThrowObjectDisposed(this); // acquire: pairs with Dispose's write, ordered by the park
        park.Reset(); // only the waiter resets, after its waker's Set: the park is clean for the next episode
        Debug.Assert(Volatile.Read(ref _state) != Waiting, "Nobody else may claim Waiting while we have not returned.");
        return true;
    }

    private bool ParkWait(ManualResetEventSlim park, int millisecondsTimeout, CancellationToken cancellationToken)
    {
        if (millisecondsTimeout == Timeout.Infinite || ReferenceEquals(_timeProvider, TimeProvider.System))
        {
            return park.Wait(millisecondsTimeout, cancellationToken);
        }
        // An injected clock: the timeout is a cancellation driven by that clock's timer.
        using var timeout = new CancellationTokenSource(TimeSpan.FromMilliseconds(millisecondsTimeout), _timeProvider);
        using var linked = cancellationToken.CanBeCanceled
            ? CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, timeout.Token)
            : null;
        try
        {
            return park.Wait(Timeout.Infinite, (linked ?? timeout).Token);
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            return false;
        }
    }
}
