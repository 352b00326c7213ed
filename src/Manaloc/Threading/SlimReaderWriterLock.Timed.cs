using System.Runtime.CompilerServices;
using Manaloc.Time;

namespace Manaloc.Threading;

// SlimReaderWriterLock: acquisition with a timeout and a cancellation token (the memory-ordering argument of the whole lock heads SlimReaderWriterLock.cs).
public sealed partial class SlimReaderWriterLock
{
    // Acquisition with a timeout and a cancellation token.
    // A timed or cancellable attempt takes the same fast paths; only a thread that has to wait pays for
    // the clock reads and, with a cancellable token, one registration (a cancellation pulses the lock's
    // monitor, so a sleeper re-checks its token at once). Giving up leaves nothing behind: a reader has
    // already backed out of the state word, a writer stops being counted as waiting (readers it held back
    // are woken), and a writer that gave up while revoking the bias restores it and releases the lock.
    // Timeouts are never shorter than asked (they run from the call on the lock's TimeProvider, rounded up).
    // A token already cancelled at the call throws <see cref="OperationCanceledException"/> even when the
    // lock is free, as <see cref="SemaphoreSlim.Wait(int, CancellationToken)"/> does.

    /// <summary>Takes a read lock, waiting at most <paramref name="timeout"/>; the same as <see cref="TryEnterReadLock(TimeSpan, CancellationToken)"/> with no token.</summary>
    /// <exception cref="ArgumentOutOfRangeException">The timeout is out of range (as for the overload with a token).</exception>
    /// <exception cref="LockRecursionException">The calling thread already holds this lock.</exception>
    public bool TryEnterReadLock(TimeSpan timeout) => TryEnterReadLock(timeout, CancellationToken.None);

    /// <summary>Takes a read lock, waiting at most <paramref name="timeout"/>.</summary>
    /// <param name="timeout">How long to wait; <see cref="TimeSpan.Zero"/> to only try, <see cref="Timeout.InfiniteTimeSpan"/> to wait without limit.</param>
    /// <param name="cancellationToken">Stops the wait.</param>
    /// <returns>True if the read lock is now held; false on timeout.</returns>
    /// <exception cref="ArgumentOutOfRangeException">The timeout is negative (other than infinite) or above <see cref="int.MaxValue"/> milliseconds.</exception>
    /// <exception cref="OperationCanceledException">The token was cancelled before the lock was taken; nothing is held.</exception>
    /// <exception cref="LockRecursionException">The calling thread already holds this lock.</exception>
    /// <exception cref="InvalidOperationException">A thread exited while holding this lock (see <see cref="EnterWriteLock"/>).</exception>
    public bool TryEnterReadLock(TimeSpan timeout, CancellationToken cancellationToken)
        => TryEnterReadTimed(ToTimeoutTicks(timeout), cancellationToken);

    /// <summary>Takes a read lock, waiting at most <paramref name="millisecondsTimeout"/>; the same as <see cref="TryEnterReadLock(int, CancellationToken)"/> with no token.</summary>
    /// <exception cref="ArgumentOutOfRangeException">The timeout is out of range (as for the overload with a token).</exception>
    /// <exception cref="LockRecursionException">The calling thread already holds this lock.</exception>
    public bool TryEnterReadLock(int millisecondsTimeout) => TryEnterReadLock(millisecondsTimeout, CancellationToken.None);

    /// <summary>Takes a read lock, waiting at most <paramref name="millisecondsTimeout"/>.</summary>
    /// <param name="millisecondsTimeout">Milliseconds; 0 to only try, <see cref="Timeout.Infinite"/> to wait without limit.</param>
    /// <param name="cancellationToken">Stops the wait.</param>
    /// <returns>True if the read lock is now held; false on timeout.</returns>
    /// <exception cref="ArgumentOutOfRangeException">The timeout is below -1.</exception>
    /// <exception cref="OperationCanceledException">The token was cancelled before the lock was taken; nothing is held.</exception>
    /// <exception cref="LockRecursionException">The calling thread already holds this lock.</exception>
    public bool TryEnterReadLock(int millisecondsTimeout, CancellationToken cancellationToken)
        => TryEnterReadTimed(ToTimeoutTicks(millisecondsTimeout), cancellationToken);

    /// <summary>Takes the write lock, waiting at most <paramref name="timeout"/>; the same as <see cref="TryEnterWriteLock(TimeSpan, CancellationToken)"/> with no token.</summary>
    /// <exception cref="ArgumentOutOfRangeException">The timeout is out of range (as for the overload with a token).</exception>
    /// <exception cref="LockRecursionException">The calling thread already holds this lock.</exception>
    public bool TryEnterWriteLock(TimeSpan timeout) => TryEnterWriteLock(timeout, CancellationToken.None);

    /// <summary>Takes the write lock, waiting at most <paramref name="timeout"/>.</summary>
    /// <param name="timeout">How long to wait; <see cref="TimeSpan.Zero"/> to only try, <see cref="Timeout.InfiniteTimeSpan"/> to wait without limit.</param>
    /// <param name="cancellationToken">Stops the wait.</param>
    /// <returns>True if the write lock is now held; false on timeout.</returns>
    /// <exception cref="ArgumentOutOfRangeException">The timeout is negative (other than infinite) or above <see cref="int.MaxValue"/> milliseconds.</exception>
    /// <exception cref="OperationCanceledException">The token was cancelled before the lock was taken; nothing is held.</exception>
    /// <exception cref="LockRecursionException">The calling thread already holds this lock.</exception>
    /// <exception cref="InvalidOperationException">A thread exited while holding a read lock on this lock.</exception>
    public bool TryEnterWriteLock(TimeSpan timeout, CancellationToken cancellationToken)
        => TryEnterWriteTimed(ToTimeoutTicks(timeout), cancellationToken);

    /// <summary>Takes the write lock, waiting at most <paramref name="millisecondsTimeout"/>; the same as <see cref="TryEnterWriteLock(int, CancellationToken)"/> with no token.</summary>
    /// <exception cref="ArgumentOutOfRangeException">The timeout is out of range (as for the overload with a token).</exception>
    /// <exception cref="LockRecursionException">The calling thread already holds this lock.</exception>
    public bool TryEnterWriteLock(int millisecondsTimeout) => TryEnterWriteLock(millisecondsTimeout, CancellationToken.None);

    /// <summary>Takes the write lock, waiting at most <paramref name="millisecondsTimeout"/>.</summary>
    /// <param name="millisecondsTimeout">Milliseconds; 0 to only try, <see cref="Timeout.Infinite"/> to wait without limit.</param>
    /// <param name="cancellationToken">Stops the wait.</param>
    /// <returns>True if the write lock is now held; false on timeout.</returns>
    /// <exception cref="ArgumentOutOfRangeException">The timeout is below -1.</exception>
    /// <exception cref="OperationCanceledException">The token was cancelled before the lock was taken; nothing is held.</exception>
    /// <exception cref="LockRecursionException">The calling thread already holds this lock.</exception>
    /// <exception cref="InvalidOperationException">A thread exited while holding a read lock on this lock.</exception>
    public bool TryEnterWriteLock(int millisecondsTimeout, CancellationToken cancellationToken)
        => TryEnterWriteTimed(ToTimeoutTicks(millisecondsTimeout), cancellationToken);

    private bool TryEnterReadTimed(long timeoutTicks, CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        var limit = new WaitLimit(timeoutTicks, cancellationToken, _timeProvider); // the timeout runs from the call
        var held = ThreadRecord.CurrentOrCreate;
        if (TryEnterReadOnce(held)) return true;
        if (timeoutTicks == 0)
        {
            ReleaseRead(); // back out of the attempt's +1
            return false;
        }
        bool entered;
        using (RegisterWake(cancellationToken))
        using (WakeAtTimeout(timeoutTicks))
        {
            entered = EnterReadSlow(limit); // backs out of the +1 and waits
        }
        if (!entered)
        {
            cancellationToken.ThrowIfCancellationRequested();
            return false;
        }
        held.Add(_id);
        return true;
    }

    private bool TryEnterWriteTimed(long timeoutTicks, CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        if (timeoutTicks == 0) return TryEnterWriteLock();
        var limit = new WaitLimit(timeoutTicks, cancellationToken, _timeProvider); // the timeout runs from the call
        var me = ThreadRecord.CurrentOrCreate; // may allocate (first use): before the lock is taken
        using (RegisterWake(cancellationToken))
        using (WakeAtTimeout(timeoutTicks))
        {
            long state = Volatile.Read(ref _state.Value); // a hint: the CAS decides
            // Full fence on success: acquire, as in EnterWriteLock.
            bool acquired = ((state & (ReaderMask | WriterHeld)) == 0 && Interlocked.CompareExchange(ref _state.Value, state | WriterHeld, state) == state)
                || EnterWriteSlow(limit);
            // As in EnterWriteLock; a revocation that gives up has restored the bias and released the lock.
            if (acquired && Volatile.Read(ref _readBias) != 0) acquired = RevokeBias(wait: true, limit);
            if (!acquired)
            {
                cancellationToken.ThrowIfCancellationRequested();
                return false;
            }
        }
        _writerThreadId = me.ThreadId; // plain, as in EnterWriteLock
        return true;
    }

    /// <summary>A cancellation pulses the monitor sleepers wait on, so a sleeper re-checks its token.</summary>
    private CancellationTokenRegistration RegisterWake(CancellationToken cancellationToken)
        => cancellationToken.CanBeCanceled
            ? cancellationToken.UnsafeRegister(static state => ((SlimReaderWriterLock)state!).PulseSleepers(), this)
            : default;

    /// <summary>
    /// With an injected clock (not <see cref="TimeProvider.System"/>), a timer on that clock pulses the monitor at the
    /// timeout, so a sleeper re-checks its limit when the clock reaches it: a sleep's length is computed from the clock
    /// but timed by the kernel, which knows nothing of a test's clock. A sleeper computes its sleep under
    /// <c>_sync</c> and the pulse takes <c>_sync</c>, so the pulse either comes before (the sleep is then 0: it gives up)
    /// or reaches it in <see cref="Monitor.Wait(object, int)"/>. Null (nothing to dispose) for the system clock or no timeout.
    /// </summary>
    private ITimer? WakeAtTimeout(long timeoutTicks)
        => timeoutTicks > 0 && !ReferenceEquals(_timeProvider, TimeProvider.System)
            ? _timeProvider.CreateTimer(static state => ((SlimReaderWriterLock)state!).PulseSleepers(), this, TimeSpan.FromTicks(timeoutTicks), Timeout.InfiniteTimeSpan)
            : null;

    private void PulseSleepers()
    {
        lock (_sync) Monitor.PulseAll(_sync); // spurious for the others: they re-check and sleep again
    }

    private static long ToTimeoutTicks(TimeSpan timeout)
    {
        if (timeout == Timeout.InfiniteTimeSpan) return WaitLimit.Infinite;
        if (timeout < TimeSpan.Zero || timeout.Ticks > int.MaxValue * TimeSpan.TicksPerMillisecond) ThrowHelper.ThrowTimeout(timeout);
        return timeout.Ticks;
    }

    private static long ToTimeoutTicks(int millisecondsTimeout)
    {
        if (millisecondsTimeout < Timeout.Infinite) ThrowHelper.ThrowTimeout(TimeSpan.FromMilliseconds(millisecondsTimeout));
        return millisecondsTimeout == Timeout.Infinite ? WaitLimit.Infinite : millisecondsTimeout * TimeSpan.TicksPerMillisecond;
    }

    /// <summary>When a wait gives up: a due timestamp on the lock's clock (none in <c>default</c>) and a token.</summary>
    private readonly struct WaitLimit
    {
        /// <summary>A timeout that never ends.</summary>
        public const long Infinite = -1;

        private readonly TimeProvider? _clock; // null: no timeout
        private readonly long _due;
        public readonly CancellationToken Token;

        /// <param name="timeoutTicks">TimeSpan ticks from now, or <see cref="Infinite"/>.</param>
        /// <param name="token">Stops the wait.</param>
        /// <param name="clock">The clock the timeout runs on.</param>
        public WaitLimit(long timeoutTicks, CancellationToken token, TimeProvider clock)
        {
            Token = token;
            if (timeoutTicks > 0)
            {
                _clock = clock;
                // Rounded up to the next timestamp unit: the wait never ends before the timeout.
                long span = (long)(((Int128)timeoutTicks * clock.TimestampFrequency + TimeSpan.TicksPerSecond - 1) / TimeSpan.TicksPerSecond);
                _due = clock.GetTimestamp() + span;
            }
        }

        /// <summary>True once the token is cancelled or the due time has passed.</summary>
        public bool Reached => Token.IsCancellationRequested || (_clock is not null && _clock.GetTimestamp() - _due >= 0);

        /// <summary>How long the next sleep may last, in milliseconds rounded up: at most <paramref name="cap"/> (<see cref="Timeout.Infinite"/>: no cap), 0 once due.</summary>
        public int SleepMilliseconds(int cap)
        {
            if (_clock is null) return cap;
            long left = _due - _clock.GetTimestamp();
            if (left <= 0) return 0;
            long frequency = _clock.TimestampFrequency;
            long ms = (long)(((Int128)left * 1000 + frequency - 1) / frequency);
            if (cap != Timeout.Infinite && ms > cap) return cap;
            return ms > int.MaxValue ? int.MaxValue : (int)ms;
        }
    }
}
