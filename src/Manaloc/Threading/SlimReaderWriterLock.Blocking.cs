using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Manaloc.Threading;

/// <summary>Contended paths: spin, then sleep on <c>_sync</c> until a release wakes everyone.</summary>
public sealed partial class SlimReaderWriterLock
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void EnterReadSlow() => EnterReadSlow(default);

    /// <summary>Backs out of the fast path's +1 and waits for readers to be let in; false (nothing held) once <paramref name="limit"/> is reached.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool EnterReadSlow(WaitLimit limit)
    {
        ReleaseRead(); // back out of the fast path's +1, exactly like an exit (it may wake a writer)
        // The fast paths skip this check: a thread holding the write side always lands here.
        if (_writerThreadId == ThreadRecord.Current?.ThreadId) ThrowWriteRecursion();
        var spinner = new SpinWait();
        int spins = 0;
        while (true)
        {
            long state = Volatile.Read(ref _state.Value); // a hint: the CAS decides
            if ((state & (WriterHeld | WaitingWriterMask)) == 0)
            {
                Debug.Assert((state & ReaderMask) < ReaderMask, "Too many readers.");
                if (Interlocked.CompareExchange(ref _state.Value, state + 1, state) == state) return true; // full fence: acquire
                continue;
            }
            if (spins++ < _spinCount)
            {
                spinner.SpinOnce(sleep1Threshold: -1);
                continue;
            }
            if (!Sleep(WriterHeld | WaitingWriterMask, limit, waitingForReaders: false)) return false;
            spins = 0;
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void EnterWriteSlow() => EnterWriteSlow(default);

    /// <summary>Waits for the write lock; false (nothing held, no longer counted as waiting) once <paramref name="limit"/> is reached.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool EnterWriteSlow(WaitLimit limit)
    {
        // The fast path skips this check: a thread holding this lock (either side) always lands here.
        CheckNotHeld(ThreadRecord.Current);
        if (SpinForWrite()) return true;
        // Register as waiting: from here new readers stay out (biased ones too), so the readers inside drain. Full fence.
        Interlocked.Add(ref _state.Value, WaitingWriterOne);
        bool acquired;
        try
        {
            acquired = WaitForWrite(limit);
        }
        catch
        {
            // An exception out of the wait (ThreadInterruptedException in Sleep or Monitor.Wait, a dead
            // reader found, out of memory): unregister, or readers would wait for this departed writer forever.
            UnregisterWaitingWriter();
            throw;
        }
        if (!acquired) UnregisterWaitingWriter(); // timed out or cancelled: as above
        return acquired;
    }

    /// <summary>A registered writer gives up: full fence; readers that slept because of it are woken to re-check.</summary>
    private void UnregisterWaitingWriter()
    {
        long after = Interlocked.Add(ref _state.Value, -WaitingWriterOne);
        if ((after & Blocked) != 0) WakeAll();
    }

    /// <summary>
    /// A writer's first, unregistered spin, like a plain spin lock's: short holds (the common case)
    /// end here with one CAS, without the two extra read-modify-writes of registering as waiting and
    /// without turning readers away. Bounded, so a stream of readers delays a writer only this long
    /// before it registers and readers stay out.
    /// </summary>
    private bool SpinForWrite()
    {
        var spinner = new SpinWait();
        int limit = Math.Min(_spinCount, UnregisteredSpins);
        for (int i = 0; i < limit; i++)
        {
            spinner.SpinOnce(sleep1Threshold: -1); // busy-waits only: the first spins never yield
            long state = Volatile.Read(ref _state.Value); // a hint: the CAS decides
            // Full fence on success: acquire, as in EnterWriteLock. Barging past registered writers is
            // allowed: writers compete by CAS among themselves anyway (no FIFO); what registration
            // guarantees is that readers cannot starve a writer.
            if ((state & (ReaderMask | WriterHeld)) == 0 && Interlocked.CompareExchange(ref _state.Value, state | WriterHeld, state) == state) return true;
        }
        return false;
    }

    /// <summary>The waiting writer's loop: true holding the lock, no longer counted as waiting; false (still counted) once <paramref name="limit"/> is reached.</summary>
    private bool WaitForWrite(WaitLimit limit)
    {
        var spinner = new SpinWait();
        int spins = 0;
        while (true)
        {
            long state = Volatile.Read(ref _state.Value); // a hint: the CAS decides
            if ((state & (ReaderMask | WriterHeld)) == 0)
            {
                Debug.Assert((state & WaitingWriterMask) != 0, "We are counted as waiting.");
                // Take the lock and stop waiting in one step. Full fence: acquire.
                if (Interlocked.CompareExchange(ref _state.Value, (state - WaitingWriterOne) | WriterHeld, state) == state) return true;
                continue;
            }
            if (spins++ < _spinCount)
            {
                spinner.SpinOnce(sleep1Threshold: -1);
                continue;
            }
            if (!Sleep(ReaderMask | WriterHeld, limit, waitingForReaders: true)) return false;
            spins = 0;
        }
    }

    /// <summary>
    /// Sleeps until a release, unless the bits in <paramref name="busy"/> clear first; false, without
    /// sleeping, once <paramref name="limit"/> is reached. A writer waiting for readers wakes every
    /// <see cref="DeadHolderCheckMilliseconds"/> to look for a reader whose thread has exited.
    /// </summary>
    private bool Sleep(long busy, WaitLimit limit, bool waitingForReaders)
    {
        if (limit.Reached) return false;
        bool timedOut;
        lock (_sync)
        {
            // Full fence: publishes Blocked before re-checking; a release after this sees it and pulses under _sync.
            long state = Interlocked.Or(ref _state.Value, Blocked);
            if ((state & busy) == 0) return true;
            // Under _sync: a cancellation after this check pulses _sync, which reaches us in Monitor.Wait.
            if (limit.Token.IsCancellationRequested) return false;
            int milliseconds = limit.SleepMilliseconds(waitingForReaders ? DeadHolderCheckMilliseconds : Timeout.Infinite);
            if (milliseconds == 0) return false;
            Interlocked.Increment(ref s_sleeps); // statistics only
            timedOut = !Monitor.Wait(_sync, milliseconds);
        }
        if (timedOut && waitingForReaders) ThrowIfAReaderDied();
        return true;
    }

    private void WakeAll()
    {
        // The release already happened: this wake must complete, or a sleeper stays asleep beside a free
        // lock. Monitor.Enter throws ThreadInterruptedException when _sync is busy and the thread has a
        // pending interrupt, so enter uninterruptibly and re-arm the interrupt afterwards.
        bool interrupted = false;
        while (true)
        {
            try
            {
                Monitor.Enter(_sync);
                break;
            }
            catch (ThreadInterruptedException)
            {
                interrupted = true;
            }
        }
        try
        {
            // Atomic, as other bits change concurrently; under _sync, so no sleeper is between its
            // Or(Blocked) and Monitor.Wait. Sleepers that still cannot proceed set Blocked again.
            Interlocked.And(ref _state.Value, ~Blocked);
            Monitor.PulseAll(_sync);
        }
        finally
        {
            Monitor.Exit(_sync);
        }
        if (interrupted) Thread.CurrentThread.Interrupt(); // the interrupt was meant for the caller's next wait
    }
}
