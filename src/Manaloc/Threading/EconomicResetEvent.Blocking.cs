using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Manaloc.Threading;

/// <summary>The waiter's slow path: spin, claim the Waiting state, block, withdraw on timeout or cancellation.</summary>
public sealed partial class EconomicResetEvent
{
    private static long s_blockedWaits;

    /// <summary>How many waits, over all events in the process, had to block (for metrics and tests).</summary>
    internal static long BlockedWaits => Interlocked.Read(ref s_blockedWaits); // statistics: orders nothing

    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool WaitSlow(long timeoutTicks, CancellationToken cancellationToken)
    {
        int state = Volatile.Read(ref _state); // a hint only: every decision below is taken by a CAS
        if (state == Disposed) ThrowHelper.ThrowObjectDisposed(this);
        if (state == Waiting || Volatile.Read(ref _waiterActive) != 0) ThrowHelper.ThrowConcurrentWaiter(); // a hint: the CAS below decides
        if (timeoutTicks == 0) return false;
        // The timeout runs from here (the call), not from the moment the waiter blocks: the spin counts.
        long due = timeoutTicks == InfiniteTicks ? NoDue : DueTimestamp(timeoutTicks);

        // Spin: a Set that lands within a few microseconds is caught without blocking. Not adaptive
        // on purpose: a waiter that stops spinning makes every Set pay the kernel wake, which slows
        // the producer, which empties the queue more often (measured: 50 ns/item became 18 µs/item).
        // SpinWait's policy, as ManualResetEventSlim's: ten growing pauses (~2 µs here), then
        // yields. Also tried on 2 vCPUs and dropped: a shorter busy phase (4 growing pauses, or 16
        // short ones then 4 growing) left the two-thread ping-pong where it was (55-90 ns per
        // hand-off, set by cache-line transfers, not by the spin) and made it slower with both
        // threads on one core (1.9-2.9 µs against 1.6-1.9 µs: sched_yield does not always switch
        // to the partner at once); padding the state word slowed the ping-pong (two events sharing
        // a line hand off in ~55 ns, padded ~70 ns: each thread writes the line it just read); a
        // spin count of 70 blocked less but did not change the medians; re-checking after every
        // short pause (6 per SpinWait busy step, same ~2 µs budget) gave 0.53-1.56x of
        // ManualResetEventSlim over seven lab runs (median 1.04x, as now) with a wider spread.
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
            if (state != Unset) break; // Waiting (another waiter) or Disposed: the claim below reports it
            cancellationToken.ThrowIfCancellationRequested();
            spinner.SpinOnce(sleep1Threshold: -1);
        }

        var park = Volatile.Read(ref _park) ?? CreatePark(); // acquire: pairs with the CAS that published it
        // One blocking waiter at a time, from its claim until it has consumed its wake-up: the
        // Waiting state alone would miss a second waiter arriving while the first still consumes,
        // and the two could then steal each other's park signal. Full fence; orders nothing else.
        if (Interlocked.CompareExchange(ref _waiterActive, 1, 0) != 0) ThrowHelper.ThrowConcurrentWaiter();
        try
        {
            return ClaimAndBlock(park, due, cancellationToken);
        }
        finally
        {
            Volatile.Write(ref _waiterActive, 0); // release: the next blocking waiter starts after everything this one did
        }
    }

    private bool ClaimAndBlock(AutoResetEvent park, long due, CancellationToken cancellationToken)
    {
        int state;
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
            Debug.Assert(state == Disposed, "Only the flag holder claims Waiting.");
            ThrowHelper.ThrowObjectDisposed(this);
        }
        Interlocked.Increment(ref s_blockedWaits); // statistics only
        return Block(park, due, cancellationToken);
    }

    private AutoResetEvent CreatePark()
    {
        // A kernel-backed auto-reset event, made only when a waiter first has to block. A loser of
        // the creation race disposes its own, never-published event.
        var created = new AutoResetEvent(false);
        // Full fence: publishes the park before this thread claims Waiting, so a setter that sees Waiting sees the park.
        var winner = Interlocked.CompareExchange(ref _park, created, null);
        if (winner is null) return created;
        created.Dispose();
        return winner;
    }

    private bool Block(AutoResetEvent park, long due, CancellationToken cancellationToken)
    {
        bool woken;
        try
        {
            woken = ParkWait(park, due, cancellationToken);
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            if (TryWithdraw()) throw new OperationCanceledException(cancellationToken);
            return Consume(park, woken: false); // a waker won the race: the signal is ours, not lost
        }
        catch (Exception) when (!TryWithdraw())
        {
            // Any other exception out of the wait (ThreadInterruptedException, a disposed token's
            // handle, out of memory): the filter withdrew our Waiting state if it could, and then the
            // exception simply propagates with the event Unset. Here a setter or Dispose took Waiting
            // first: absorb its park.Set() so the next episode starts clean, and put a setter's signal
            // back (Unset→Signaled; fails harmlessly if Dispose took it) so it is not lost.
            WaitUninterruptibly(park);
            Interlocked.CompareExchange(ref _state, Signaled, Unset); // full fence, as in Set
            throw;
        }
        if (!woken && TryWithdraw())
        {
            return false;
        }
        return Consume(park, woken);
    }

    /// <summary>Gives up a claimed Waiting state; false when a setter or Dispose took it first.</summary>
    private bool TryWithdraw()
        => Interlocked.CompareExchange(ref _state, Unset, Waiting) == Waiting; // full fence; decides waker vs withdrawer

    private bool Consume(AutoResetEvent park, bool woken)
    {
        // Not yet woken: the waker took our Waiting state and its park.Set() is a few instructions
        // away. Waiting for it consumes the park's signal, so the next blocking episode starts clean.
        if (!woken) WaitUninterruptibly(park);
        if (Volatile.Read(ref _wokenByDispose)) ThrowHelper.ThrowObjectDisposed(this); // acquire: pairs with Dispose's write, ordered by the park
        Debug.Assert(Volatile.Read(ref _state) != Waiting, "Nobody else may claim Waiting while we have not returned.");
        return true;
    }

    /// <summary>
    /// Waits for a Set that is known to be coming (a few instructions away on the waker's thread); an
    /// interrupt meanwhile is held back and re-raised afterwards, so the park never keeps a stale signal.
    /// </summary>
    private static void WaitUninterruptibly(AutoResetEvent park)
    {
        bool interrupted = false;
        while (true)
        {
            try
            {
                park.WaitOne();
                break;
            }
            catch (ThreadInterruptedException)
            {
                interrupted = true;
            }
        }
        if (interrupted) Thread.CurrentThread.Interrupt(); // the caller's next blocking call sees it
    }

    /// <summary>The due timestamp of an infinite wait.</summary>
    private const long NoDue = long.MaxValue;

    /// <summary>Now plus <paramref name="timeoutTicks"/> on the event's clock, rounded up to its next timestamp unit.</summary>
    private long DueTimestamp(long timeoutTicks)
    {
        long frequency = _timeProvider.TimestampFrequency;
        Int128 span = ((Int128)timeoutTicks * frequency + TimeSpan.TicksPerSecond - 1) / TimeSpan.TicksPerSecond;
        long now = _timeProvider.GetTimestamp();
        return span >= NoDue - now ? NoDue - 1 : now + (long)span;
    }

    /// <summary>Timestamp units left until <paramref name="due"/> on the event's clock; zero or less once it has passed.</summary>
    private long Left(long due) => due - _timeProvider.GetTimestamp();

    /// <summary>Blocks until woken (true), the due time passes (false) or the token is cancelled (throws).</summary>
    private bool ParkWait(AutoResetEvent park, long due, CancellationToken cancellationToken)
    {
        if (due != NoDue && !ReferenceEquals(_timeProvider, TimeProvider.System))
        {
            return ParkWaitOnClock(park, due, cancellationToken);
        }
        while (true)
        {
            int milliseconds = Timeout.Infinite;
            if (due != NoDue)
            {
                long left = Left(due);
                if (left <= 0) return false;
                // Rounded up: a kernel wait of whole milliseconds never ends before the due time, except
                // that it may (its clock is coarser than the timestamps); then the loop waits for the rest.
                Int128 ms = ((Int128)left * 1000 + _timeProvider.TimestampFrequency - 1) / _timeProvider.TimestampFrequency;
                milliseconds = ms >= int.MaxValue ? int.MaxValue : (int)ms;
            }
            if (!cancellationToken.CanBeCanceled)
            {
                if (park.WaitOne(milliseconds)) return true;
                continue;
            }
            // Index 0 wins when both are signalled, so a delivered signal is never left behind.
            int index = WaitHandle.WaitAny([park, cancellationToken.WaitHandle], milliseconds);
            if (index == 1) throw new OperationCanceledException(cancellationToken);
            if (index == 0) return true;
        }
    }

    private bool ParkWaitOnClock(AutoResetEvent park, long due, CancellationToken cancellationToken)
    {
        while (true)
        {
            long left = Left(due);
            if (left <= 0) return false;
            // An injected clock: the timeout is a cancellation driven by that clock's timer, for the time
            // left on it (rounded up to a tick), so time that passed before the waiter blocked counts.
            long frequency = _timeProvider.TimestampFrequency;
            Int128 ticks = ((Int128)left * TimeSpan.TicksPerSecond + frequency - 1) / frequency;
            using var timeout = new CancellationTokenSource(TimeSpan.FromTicks(ticks >= long.MaxValue ? long.MaxValue : (long)ticks), _timeProvider);
            // The timer counts from when it was made, the time left from when the clock was read: if the clock moved on
            // in between (a test's clock advanced while this thread was between the two), the timer would fire late by
            // that much, perhaps never within the test's time. Read again, and start over if it moved by more than 1 ms.
            if (due - _timeProvider.GetTimestamp() < left - Math.Max(1, frequency / 1000)) continue;
            using var linked = cancellationToken.CanBeCanceled
                ? CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, timeout.Token)
                : null;
            int index = WaitHandle.WaitAny([park, (linked ?? timeout).Token.WaitHandle]);
            if (index == 0) return true;
            if (cancellationToken.IsCancellationRequested) throw new OperationCanceledException(cancellationToken);
            // The clock's timer fired: the loop checks the clock itself, in case the timer was early.
        }
    }
}
