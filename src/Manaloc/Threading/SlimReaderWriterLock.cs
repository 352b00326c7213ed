using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using System.Diagnostics.Metrics;
using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics.X86;
using Manaloc.Diagnostics;
using Manaloc.Time;

namespace Manaloc.Threading;

// Memory-ordering argument
// ------------------------
// One long, _state, holds everything the fast paths need: the reader count (low 24 bits), a
// writer-held bit, a "someone sleeps on _sync" bit (Blocked) and, in the high 32 bits, the number
// of writers waiting. Every acquisition and release is an Interlocked operation on _state, hence
// a full fence: a reader's or writer's critical section cannot leak before its acquiring RMW or
// after its releasing RMW, and all RMWs on _state are totally ordered.
//   * Readers enter with one XADD (+1) and keep it only if no writer holds or waits; otherwise
//     they undo it (-1, exactly like an exit) and take the slow path. A writer acquires only by a
//     CAS from a value with zero readers and no writer, so a reader's +1 either precedes that CAS
//     (the CAS fails) or follows it (the reader sees WriterHeld and backs out).
//   * Waiting writers are counted in _state; new readers stay out while the count is non-zero
//     (biased ones read it after their slot increment and back out), so a stream of readers cannot
//     starve a writer. A contended writer first spins a bounded
//     number of times unregistered (CAS from "no readers, no writer", like a spin lock), then
//     registers: the bound keeps the no-starvation argument.
//   * Ownership checks cost the fast paths one thread-static load. _writerThreadId is a plain int
//     written only by the writer itself, after its acquiring CAS and before its releasing add, so
//     those RMWs order it; other threads only compare it with their own id, and no stale value can
//     equal it (only a thread stores its own id). The fast paths skip the recursion checks because
//     a holder cannot reach them: a thread holding the write side sees WriterHeld in the value its
//     own RMW returns (or in its CAS precondition) and goes to a slow path, which checks; a thread
//     holding this read lock has a non-empty record (read fast path refused) and either its own +1
//     in the reader count (write CAS refused) or a biased read, which RevokeBias checks before it
//     waits (see below). The record is thread-local: no ordering needed.
//   * Sleeping: a thread that must block takes _sync, sets Blocked with an Interlocked.Or (full
//     fence) and re-checks the value that Or returned before Monitor.Wait. A releaser changes
//     _state first and, if the value it produced has Blocked, takes _sync, clears Blocked and
//     PulseAll. Both sides are RMWs on _state: either the release comes first (the sleeper's Or
//     returns the released value and it does not sleep) or the Or comes first (the releaser sees
//     Blocked and, because the sleeper holds _sync until Monitor.Wait releases it, its PulseAll
//     reaches the sleeper). No wakeup is lost; spurious ones just loop.
//   * Reader bias (BRAVO, the section below): while _readBias is 1, a thread's first read
//     lock is +1 on its own padded slot, not on _state. Reader: slot RMW (full fence), then re-read
//     _readBias; kept only if still 1, otherwise -1 and the path above. Writer: holding WriterHeld,
//     clears _readBias with Interlocked.Exchange (full fence), then reads every slot and waits until
//     all are 0. Dekker: each side writes its variable, fences (the RMW, plus an explicit barrier on
//     Arm64, where an acquire-release atomic does not order a later load of another variable:
//     StoreLoadFence), reads the other's, so at least one
//     sees the other: either the writer's scan sees the reader's +1 (and waits for its -1, itself a
//     full fence after the critical section) or the reader's re-read sees 0 (and backs out). The
//     flag is set to 1 only by a thread holding _state (a reader through it, or a writer undoing a
//     failed revocation), so while a writer holds the lock it stays 0, and 0 with _state free means
//     no biased reader inside: a writer that finds it 0 after its acquiring RMW need not scan. A
//     biased exit re-reads the flag after its -1; 0 means a writer may be asleep on the slots, so it
//     checks Blocked (the sleeper sets Blocked, then re-scans: Dekker again) and wakes it.

/// <summary>
/// A reader-writer lock in one state word, with reader bias: readers enter and leave with one
/// interlocked add each, on a slot of their own while the lock is read-biased and on the shared
/// word otherwise; a writer takes the word with one compare-and-swap and, if readers are biased,
/// revokes the bias and waits for their slots to drain. Contended threads spin briefly, then block.
/// Writers do not starve; readers can (a steady stream of several writers keeps them out: writer
/// preference, as the contract asks; a phase-fair hand-off would bound their wait). Not recursive:
/// re-entering (read or write) throws <see cref="LockRecursionException"/>.
/// </summary>
/// <remarks>
/// <para>Why: <see cref="ReaderWriterLockSlim"/> keeps per-thread bookkeeping for recursion and
/// upgrades that costs more than a short read-mostly critical section; Windows' SRW lock showed that
/// a lock that gives those up can beat a plain mutex for readers. This is that design for .NET.</para>
/// <para>Cost: an uncontended read pair is one thread-static load, a few compares, and two
/// interlocked adds; a write pair one CAS and one interlocked add. Reader bias (after BRAVO, Dice
/// and Kogan, 2019): a thread's first read lock goes to a per-thread slot on its own cache lines,
/// so readers on different cores share no written line and scale; the first write after a biased
/// period pays a revocation (a scan of the slots, waiting for biased readers inside), after which
/// the bias stays off for nine times the revocation's duration, and a reader turns it back on
/// later. Size: about 300 bytes plus 264 per slot (twice the processor count rounded up to a power
/// of two, at most 32 slots), most of it padding. Recursion is detected without a dictionary: a
/// thread's record holds the one read lock it usually holds in a field and any others in a small
/// list that only the out-of-line paths touch.</para>
/// <para>Fairness: once a writer waits, new readers wait behind it: on the state word they see it
/// counted, a biased reader checks the count after its slot increment and backs out, and a writer
/// revoking the bias holds the state word. The readers inside finish, the writer runs, then readers
/// and writers compete again. Readers can wait long under a continuous stream of writers.</para>
/// <para>Waiting with a limit: <see cref="TryEnterReadLock(TimeSpan, CancellationToken)"/> and
/// <see cref="TryEnterWriteLock(TimeSpan, CancellationToken)"/> (and their millisecond forms) give up
/// on a timeout (false) or a cancellation (<see cref="OperationCanceledException"/>), leaving nothing
/// held. A thread that exits while holding a read lock can never release it: a writer waiting for it
/// finds the exited thread's record within half a second and throws
/// <see cref="InvalidOperationException"/> naming the thread, instead of hanging.</para>
/// <para>Thread safety: all members may be used from any thread. A lock must be released by the
/// thread that took it. Misuse is reported, not tolerated: taking a lock this thread already
/// holds (read in read, write in write, read in write, write in read — there are no upgrades)
/// throws <see cref="LockRecursionException"/>; releasing a lock this thread does not hold throws
/// <see cref="SynchronizationLockException"/>.</para>
/// </remarks>
public sealed partial class SlimReaderWriterLock
{
    /// <summary>The spin count used when none is given.</summary>
    public const int DefaultSpinCount = 20;

    /// <summary>
    /// Spins a writer makes before it registers as waiting (see SpinForWrite): SpinWait's busy-wait
    /// phase (it yields from the tenth spin on). docs/threading-events.md says how it was chosen.
    /// </summary>
    private const int UnregisteredSpins = 10;

    private const long ReaderMask = (1L << 24) - 1;
    private const long WriterHeld = 1L << 24;
    private const long Blocked = 1L << 25;
    /// <summary>Writers counted as waiting (tests and diagnostics; a snapshot).</summary>
    internal int WaitingWriters => (int)((ulong)Volatile.Read(ref _state.Value) >> 32); // snapshot, orders nothing

    private const long WaitingWriterOne = 1L << 32;
    private const long WaitingWriterMask = ~((1L << 32) - 1);

    /// <summary>
    /// The state word, alone on its cache lines: every read pair does two interlocked adds on it, and
    /// without padding each one that moves the line to another core also evicts the fields the fast
    /// paths only read (<see cref="_id"/>), so an exit would fetch the line twice (docs/threading-events.md
    /// gives the gain). It costs 256 bytes per lock.
    /// </summary>
    private Padded<long> _state;
    private int _writerThreadId;
    private readonly int _spinCount;
    private readonly object _sync = new();
    private readonly TimeProvider _timeProvider; // the timed paths' clock only; the bias's inhibit time is the processor's, on Clock

    /// <summary>The monitor sleepers wait on (tests hold it to make a wake contend).</summary>
    internal object SyncForTests => _sync;

    /// <summary>Creates a lock.</summary>
    /// <param name="spinCount">How many times a contended thread re-checks (busy-spinning, then
    /// yielding) before it blocks; 0 blocks at once.</param>
    /// <param name="timeProvider">The clock the timeouts of <see cref="TryEnterReadLock(TimeSpan, CancellationToken)"/> and
    /// <see cref="TryEnterWriteLock(TimeSpan, CancellationToken)"/> run on; <see cref="TimeProvider.System"/> when null.
    /// Like every Manaloc component that waits, the lock takes its time from a provider so tests can drive it.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="spinCount"/> is negative or above 2047.</exception>
    public SlimReaderWriterLock(int spinCount = DefaultSpinCount, TimeProvider? timeProvider = null)
        : this(spinCount, DefaultInhibitFactor, timeProvider)
    {
    }

    /// <summary>A lock with a chosen inhibit factor (tests: 0 turns the bias back on at once, so revocations are frequent).</summary>
    internal SlimReaderWriterLock(int spinCount, int inhibitFactor, TimeProvider? timeProvider = null)
    {
        if ((uint)spinCount > EconomicResetEvent.MaxSpinCount) ThrowHelper.ThrowSpinCount(spinCount);
        _spinCount = spinCount;
        _inhibitFactor = inhibitFactor;
        _timeProvider = timeProvider ?? TimeProvider.System;
    }

    /// <summary>Readers inside the lock now (a snapshot; may include a reader that is backing out).</summary>
    public int CurrentReadCount => (int)((Volatile.Read(ref _state.Value) & ReaderMask) + BiasedReaderCount()); // snapshot

    /// <summary>True if the calling thread holds the write lock.</summary>
    public bool IsWriteLockHeld => _writerThreadId == ThreadRecord.Current?.ThreadId; // only the writer stores its own id

    /// <summary>True if the calling thread holds a read lock on this lock.</summary>
    public bool IsReadLockHeld => ThreadRecord.Current?.Holds(_id) == true;

    /// <summary>Takes a read lock, waiting while a writer holds or waits for the lock.</summary>
    /// <exception cref="LockRecursionException">The calling thread already holds this lock.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void EnterReadLock()
    {
        // Fast path: this thread holds no read lock at all, so it cannot be re-entering one. (Holding
        // this lock's write side shows in _state as WriterHeld, with the bias off, and is caught on the slow path.)
        var held = ThreadRecord.Current;
        if (held is null || held.First != 0)
        {
            EnterReadTracked();
            return;
        }
        // A hint (TryEnterBiased re-reads it after its fence): biased, the read touches only this thread's slot.
        if (Volatile.Read(ref _readBias) != 0 && TryEnterBiased(held)) return;
        // Full fence: the critical section's reads cannot move above this acquire.
        long state = Interlocked.Increment(ref _state.Value);
        if ((state & (WriterHeld | WaitingWriterMask)) != 0)
        {
            EnterReadSlow();
        }
        Debug.Assert((Volatile.Read(ref _state.Value) & WriterHeld) == 0, "No writer inside while a reader is.");
        held.First = _id;
        if (--held.BiasCheckCountdown < 0) MaybeRestoreBias(held); // holding the state word: allowed to re-enable the bias
    }

    /// <summary>Takes a read lock if that is possible without waiting.</summary>
    /// <returns>True if the read lock is now held.</returns>
    /// <exception cref="LockRecursionException">The calling thread already holds this lock.</exception>
    public bool TryEnterReadLock()
    {
        if (TryEnterReadOnce(ThreadRecord.CurrentOrCreate)) return true;
        ReleaseRead(); // back out of the attempt's +1
        return false;
    }

    /// <summary>
    /// One read attempt of the tracked paths (<see cref="TryEnterReadLock()"/> and the timed forms): true when the read lock
    /// is held and recorded; false when a writer holds or waits, with the attempt's +1 still in the state word for the
    /// caller to back out of (<see cref="ReleaseRead"/>) or to wait with (<c>EnterReadSlow</c>).
    /// </summary>
    /// <exception cref="LockRecursionException">The calling thread already holds this lock.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool TryEnterReadOnce(ThreadRecord held)
    {
        CheckNotHeld(held);
        if (held.First == 0 && Volatile.Read(ref _readBias) != 0 && TryEnterBiased(held)) return true; // a hint, as in EnterReadLock
        held.EnsureRoom(); // may allocate: before the lock is taken, so a failure leaves nothing held
        long state = Interlocked.Increment(ref _state.Value); // full fence, as in EnterReadLock
        if ((state & (WriterHeld | WaitingWriterMask)) != 0) return false;
        held.Add(_id);
        return true;
    }

    /// <summary>Releases a read lock taken by the calling thread.</summary>
    /// <exception cref="SynchronizationLockException">The calling thread holds no read lock on this lock.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void ExitReadLock()
    {
        var held = ThreadRecord.Current;
        if (held is not null && held.MoreCount == 0)
        {
            long first = held.First;
            if (first == _id)
            {
                held.First = 0;
                ReleaseRead();
                return;
            }
            if (first == -_id)
            {
                held.First = 0;
                ReleaseBiased(held);
                return;
            }
        }
        ExitReadTracked(held);
    }

    /// <summary>Takes the write lock, waiting for readers and any writer to leave.</summary>
    /// <exception cref="LockRecursionException">The calling thread already holds this lock.</exception>
    /// <exception cref="InvalidOperationException">A thread exited while holding a read lock on this lock: it can never be released.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void EnterWriteLock()
    {
        // No recursion check here: if this thread held the lock (either side), _state would show a
        // reader or the writer and the CAS below would not be tried, or (a biased read) RevokeBias
        // would see it; the slow paths check.
        int me = ThreadRecord.CurrentOrCreate.ThreadId; // may allocate (first use): before the lock is taken
        long state = Volatile.Read(ref _state.Value); // a hint: the CAS decides
        // Full fence: the critical section cannot move above this acquire.
        if ((state & (ReaderMask | WriterHeld)) != 0 || Interlocked.CompareExchange(ref _state.Value, state | WriterHeld, state) != state)
        {
            EnterWriteSlow();
        }
        // After the acquire: sees any re-enabling reader's store (its release preceded our acquire). No one
        // turns the bias on while we hold the state word, so off here means no biased reader is inside.
        if (Volatile.Read(ref _readBias) != 0) RevokeBias(wait: true);
        Debug.Assert(_writerThreadId == 0, "Two writers inside.");
        _writerThreadId = me; // plain: read only by this thread, or compared by others with their own id
    }

    /// <summary>Takes the write lock if that is possible without waiting.</summary>
    /// <returns>True if the write lock is now held.</returns>
    /// <exception cref="LockRecursionException">The calling thread already holds this lock.</exception>
    public bool TryEnterWriteLock()
    {
        var me = ThreadRecord.CurrentOrCreate; // may allocate (first use): before the lock is taken
        long state = Volatile.Read(ref _state.Value); // a hint: the CAS decides
        // Full fence on success: the critical section cannot move above this acquire.
        if ((state & (ReaderMask | WriterHeld)) != 0 || Interlocked.CompareExchange(ref _state.Value, state | WriterHeld, state) != state)
        {
            CheckNotHeld(me);
            return false;
        }
        // As in EnterWriteLock; biased readers inside: the bias is restored and the lock released.
        if (Volatile.Read(ref _readBias) != 0 && !RevokeBias(wait: false)) return false;
        _writerThreadId = me.ThreadId; // plain, as in EnterWriteLock
        return true;
    }

    /// <summary>Releases the write lock held by the calling thread.</summary>
    /// <exception cref="SynchronizationLockException">The calling thread does not hold the write lock.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void ExitWriteLock()
    {
        if (_writerThreadId != ThreadRecord.Current?.ThreadId) ThrowHelper.ThrowNotHeld("ExitWriteLock: the calling thread does not hold the write lock of this SlimReaderWriterLock.");
        _writerThreadId = 0; // plain: ordered before the release below
        ReleaseWrite();
    }

    /// <summary>Clears WriterHeld and wakes sleepers (a writer's exit, or a writer backing out of a revocation).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void ReleaseWrite()
    {
        // Full fence: the critical section's writes are visible before the lock reads as free.
        long state = Interlocked.Add(ref _state.Value, -WriterHeld);
        if ((state & Blocked) != 0)
        {
            WakeAll();
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void ReleaseRead()
    {
        // Full fence: the critical section's reads complete before the count drops.
        long state = Interlocked.Decrement(ref _state.Value);
        Debug.Assert((state & ReaderMask) != ReaderMask, "Reader count underflow.");
        if ((state & (Blocked | ReaderMask | WriterHeld)) == Blocked)
        {
            // Last reader out, no writer inside, someone sleeps: a writer waiting for readers to drain
            // may proceed. (With a writer inside, that writer's exit does the waking.)
            WakeAll();
        }
    }

    // Recursion checks and checked exits, through the per-thread record (ThreadRecord, in its own file).

    private static long s_lastId;

    /// <summary>
    /// This lock's identity in the threads' records: unique and never 0 (64 bits do not wrap). A
    /// record keeps ids, not references, so recording a read lock is a plain store (no GC write
    /// barrier) and a record never keeps a lock alive.
    /// </summary>
    private readonly long _id = Interlocked.Increment(ref s_lastId); // uniqueness only: orders nothing

    /// <summary>EnterReadLock for a thread that already holds a read lock (or has no record yet).</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void EnterReadTracked()
    {
        var held = ThreadRecord.CurrentOrCreate;
        CheckNotHeld(held);
        held.EnsureRoom(); // may allocate: before the lock is taken, so a failure leaves nothing held
        long state = Interlocked.Increment(ref _state.Value); // full fence, as in EnterReadLock
        if ((state & (WriterHeld | WaitingWriterMask)) != 0)
        {
            EnterReadSlow();
        }
        held.Add(_id);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ExitReadTracked(ThreadRecord? held)
    {
        bool biased = held?.First == -_id; // before Remove, which may refill First
        if (held is null || !held.Remove(_id)) ThrowHelper.ThrowNotHeld("ExitReadLock: the calling thread does not hold a read lock on this SlimReaderWriterLock.");
        if (biased) ReleaseBiased(held);
        else ReleaseRead();
    }

    /// <summary>Throws if the calling thread holds this lock, on either side.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void CheckNotHeld(ThreadRecord? held)
    {
        if (held is null) return; // no record: this thread has never taken a lock
        if (_writerThreadId == held.ThreadId) ThrowWriteRecursion();
        if (held.Holds(_id)) ThrowReadRecursion();
    }

    [DoesNotReturn]
    private static void ThrowWriteRecursion()
        => ThrowHelper.ThrowRecursion("The calling thread already holds the write lock of this SlimReaderWriterLock; it is not recursive.");

    // Contended paths: spin, then sleep on <c>_sync</c> until a release wakes everyone.

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void EnterReadSlow() => EnterReadSlow(default);

    /// <summary>Backs out of the fast path's +1 and waits for readers to be let in; false (nothing held) once <paramref name="limit"/> is reached.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool EnterReadSlow(WaitLimit limit)
    {
        ReleaseRead(); // back out of the fast path's +1, exactly like an exit (it may wake a writer)
        // The fast paths skip this check: a thread holding the write side always lands here.
        if (_writerThreadId == ThreadRecord.Current?.ThreadId) ThrowWriteRecursion();
        // A reader enters once no writer holds or waits: one more reader.
        return SpinThenSleepUntilFree(WriterHeld | WaitingWriterMask, take: 1, limit, waitingForReaders: false);
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
    // Once no reader or writer holds the lock, take it and stop waiting in one step: WriterHeld is clear
    // and this writer is counted in the waiting field, so adding WriterHeld - WaitingWriterOne sets the
    // bit and takes one from the count without a borrow into another field.
    private bool WaitForWrite(WaitLimit limit)
        => SpinThenSleepUntilFree(ReaderMask | WriterHeld, take: WriterHeld - WaitingWriterOne, limit, waitingForReaders: true);

    /// <summary>
    /// The slow paths' shared wait: once the bits in <paramref name="busy"/> are clear, adds
    /// <paramref name="take"/> to the state by CAS and returns true; spins <see cref="_spinCount"/> times
    /// between sleeps; false, without the lock, once <paramref name="limit"/> is reached.
    /// </summary>
    private bool SpinThenSleepUntilFree(long busy, long take, WaitLimit limit, bool waitingForReaders)
    {
        var spinner = new SpinWait();
        int spins = 0;
        while (true)
        {
            long state = Volatile.Read(ref _state.Value); // a hint: the CAS decides
            if ((state & busy) == 0)
            {
                Debug.Assert((state & ReaderMask) < ReaderMask, "Too many readers.");
                Debug.Assert(!waitingForReaders || (state & WaitingWriterMask) != 0, "A waiting writer is counted as waiting.");
                if (Interlocked.CompareExchange(ref _state.Value, state + take, state) == state) return true; // full fence: acquire
                continue;
            }
            if (spins++ < _spinCount)
            {
                spinner.SpinOnce(sleep1Threshold: -1);
                continue;
            }
            if (!Sleep(busy, limit, waitingForReaders)) return false;
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

    [DoesNotReturn]
    private static void ThrowReadRecursion()
        => ThrowHelper.ThrowRecursion("The calling thread already holds a read lock on this SlimReaderWriterLock; it is not recursive and has no upgrades.");

    // Telemetry: how often contended threads had to sleep, over every lock in the process.

    private static long s_sleeps;

    // Observable: reads the counter the sleeping path keeps anyway; the fast paths pay nothing. Process-wide: a lock has
    // no name, and tracking every live lock for a per-instance tag would cost each one, so only the kind tag is set.
    private static readonly ObservableCounter<long> s_sleepsInstrument = ManalocMeters.Threading.CreateObservableCounter(
        "manaloc.rwlock.sleeps",
        () => new Measurement<long>(Sleeps, new KeyValuePair<string, object?>(ManalocTelemetry.KindTag, "rwlock")),
        unit: "{sleep}",
        description: "Times a thread contending for a SlimReaderWriterLock stopped spinning and slept.");

    /// <summary>Sleeps over all locks in the process (metrics and tests).</summary>
    internal static long Sleeps => Interlocked.Read(ref s_sleeps); // statistics: orders nothing
}
