using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics.X86;
using Manaloc.Time;

namespace Manaloc.Threading;

// SlimReaderWriterLock: reader bias (BRAVO) (the memory-ordering argument of the whole lock heads SlimReaderWriterLock.cs).
public sealed partial class SlimReaderWriterLock
{
    // Reader bias (BRAVO, Dice and Kogan, USENIX ATC 2019): while <see cref="_readBias"/> is on, a
    // thread's first read lock is an interlocked add on a reader slot of its own instead of on the shared
    // state word, so readers on different cores do not bounce one cache line. A writer takes the state
    // word as before, then revokes the bias and waits for the slots to drain; the bias then stays off for
    // <see cref="_inhibitFactor"/> times the revocation's duration, so write-heavy loads do not pay a scan
    // per write. A reader that holds the lock through the state word turns it back on once that time has passed.

    /// <summary>BRAVO's N: after a revocation that took d, the bias stays off for N × d (at most 1/(N+1) of the time goes to revocations).</summary>
    private const int DefaultInhibitFactor = 9;

    /// <summary>Most reader slots a lock has (each 264 bytes; a revocation reads them all).</summary>
    private const int MaxSlots = 32;

    /// <summary>Read locks a thread takes through the state word between two looks at the clock for re-enabling the bias.</summary>
    private const int BiasCheckInterval = 64;

    /// <summary>
    /// Slots per lock: twice the processor count rounded up to a power of two, at most <see cref="MaxSlots"/>.
    /// The same for every lock, so a thread's record keeps its slot's offset ready (<c>SlotOffset</c>).
    /// </summary>
    internal static readonly int SlotCount = (int)BitOperations.RoundUpToPowerOf2((uint)Math.Clamp(2 * Environment.ProcessorCount, 1, MaxSlots));

    /// <summary>Biased readers per slot, each on its own cache lines; a thread's slot is at its record's <c>SlotOffset</c>.</summary>
    private readonly Padded<long>[] _slots = new Padded<long>[SlotCount];
    private readonly int _inhibitFactor;

    /// <summary>1 while readers may take the slots; written only by a thread holding the state word (a writer, or a reader through it).</summary>
    private int _readBias = 1;

    /// <summary>Timestamp (<see cref="Clock.GetTimestamp"/>) before which the bias is not turned back on.</summary>
    private long _inhibitUntil;

    /// <summary>Completed revocations; written only by a writer holding the lock.</summary>
    private long _revocations;

    /// <summary>Completed revocations whose first scan found a biased reader inside (tests: proof that writers met biased readers).</summary>
    private long _revocationsThatWaited;

    /// <summary>True while readers take the lock through their slots (tests and diagnostics; a snapshot).</summary>
    internal bool IsReadBiased => Volatile.Read(ref _readBias) != 0; // snapshot, orders nothing

    /// <summary>Revocations completed so far (tests; exact once the writers are joined).</summary>
    internal long Revocations => Volatile.Read(ref _revocations); // snapshot, orders nothing

    /// <summary>Revocations that had to wait for a biased reader (tests; exact once the writers are joined).</summary>
    internal long RevocationsThatWaited => Volatile.Read(ref _revocationsThatWaited); // snapshot, orders nothing

    /// <summary>True if the calling thread holds a read lock on this lock through its reader slot (tests).</summary>
    internal bool IsBiasedReadHeld => ThreadRecord.Current?.First == -_id;

    /// <summary>Turns the bias off for good, so readers use the state word (tests of the state word's own paths). No reader may be inside.</summary>
    internal void TurnBiasOffForTests()
    {
        EnterWriteLock(); // revokes the bias if it is on
        Volatile.Write(ref _inhibitUntil, long.MaxValue); // under the write lock, after RevokeBias wrote it: never re-enabled
        ExitWriteLock();
    }

    /// <summary>The calling thread's reader slot on this lock. Every lock has <see cref="SlotCount"/> slots, so the offset is in range.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private ref long Slot(ThreadRecord held)
        => ref Unsafe.AddByteOffset(ref MemoryMarshal.GetArrayDataReference(_slots), held.SlotOffset).Value;

    /// <summary>Takes a read lock through the slot if the bias holds after the slot's increment.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool TryEnterBiased(ThreadRecord held)
    {
        ref long slot = ref Slot(held);
        // Full fence: the +1 is visible before the flag is read again (Dekker with RevokeBias' clear, fence, scan).
        Interlocked.Increment(ref slot);
        StoreLoadFence();
        // Acquire: the critical section's reads stay below it. A waiting writer turns new readers away
        // here too (the slow path queues them behind it), or biased readers could keep a writer that
        // waits for the state word's readers waiting; safety does not rest on this read, only fairness.
        if (Volatile.Read(ref _readBias) != 0 && (Volatile.Read(ref _state.Value) & WaitingWriterMask) == 0)
        {
            held.First = -_id;
            return true;
        }
        BackOutBiased(ref slot);
        return false;
    }

    /// <summary>Undoes a slot increment that found the bias off: a revoking writer may be waiting for this slot.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void BackOutBiased(ref long slot)
    {
        Interlocked.Decrement(ref slot); // full fence: before the Blocked check in WakeRevoker
        StoreLoadFence();
        WakeRevoker();
    }

    /// <summary>Releases a read lock taken through the slot.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void ReleaseBiased(ThreadRecord held)
    {
        // Full fence: the critical section's reads complete before a revoking writer can see the slot drained.
        Interlocked.Decrement(ref Slot(held));
        StoreLoadFence();
        // Read after the decrement: if a writer cleared the flag and its scan missed this decrement, this read sees the clear (Dekker).
        if (Volatile.Read(ref _readBias) == 0) WakeRevoker();
    }

    /// <summary>A slot dropped while the bias is off: wake a writer asleep in <see cref="SleepWhileBiasedReaders"/>.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void WakeRevoker()
    {
        // After the slot's RMW (a full fence): pairs with the sleeper's Or(Blocked), then re-scan; one of the two sees the other.
        if ((Volatile.Read(ref _state.Value) & Blocked) != 0) WakeAll();
    }

    /// <summary>
    /// Called by a writer that holds the state word (WriterHeld) and saw the bias on: clears it and waits for
    /// the biased readers to leave. On failure (<paramref name="wait"/> false and readers inside, or an
    /// exception) the bias is restored and the write lock released, as if the writer had never come.
    /// </summary>
    /// <returns>True if the writer now holds the lock alone; false (lock released) if readers are inside and it may not wait.</returns>
    /// <exception cref="LockRecursionException">The calling thread holds a biased read lock on this lock (lock released first).</exception>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool RevokeBias(bool wait) => RevokeBias(wait, default);

    /// <summary>As <see cref="RevokeBias(bool)"/>, giving up (bias restored, lock released, false) once <paramref name="limit"/> is reached.</summary>
    private bool RevokeBias(bool wait, WaitLimit limit)
    {
        // The write fast paths cannot see a biased read of this thread (it is not in the state word); waiting for our own slot would hang.
        if (ThreadRecord.Current?.First == -_id)
        {
            ReleaseWrite();
            ThrowReadRecursion();
        }
        long start = Clock.GetTimestamp();
        // Full fence: the clear is visible before the slots are read (Dekker with TryEnterBiased's increment, then flag re-read).
        Interlocked.Exchange(ref _readBias, 0);
        StoreLoadFence();
        bool drained, waited;
        try
        {
            drained = WaitForBiasedReaders(wait, limit, out waited);
        }
        catch
        {
            // Interrupted while asleep: the readers inside still count on the bias (later writers must scan for them).
            Volatile.Write(ref _readBias, 1); // ordered before the release below (its RMW is a full fence)
            ReleaseWrite();
            throw;
        }
        if (!drained)
        {
            Volatile.Write(ref _readBias, 1); // as above: the readers inside keep their slots
            ReleaseWrite();
            return false;
        }
        long end = Clock.GetTimestamp();
        Volatile.Write(ref _inhibitUntil, end + (end - start) * _inhibitFactor); // atomic 64-bit store; read by re-enabling readers, orders nothing
        _revocations++; // plain: only a writer holding the lock writes it
        if (waited) _revocationsThatWaited++; // plain, as above
        return true;
    }

    /// <summary>Spins, then sleeps, until every slot is zero. False at once if <paramref name="wait"/> is false and a slot is not, or once <paramref name="limit"/> is reached.</summary>
    /// <param name="wait">False: do not wait for biased readers.</param>
    /// <param name="limit">When to give up waiting.</param>
    /// <param name="waited">True if a biased reader was inside at the first scan.</param>
    private bool WaitForBiasedReaders(bool wait, WaitLimit limit, out bool waited)
    {
        var spinner = new SpinWait();
        int spins = 0;
        waited = false;
        while (AnyBiasedReader())
        {
            waited = true;
            if (!wait) return false;
            if (spins++ < _spinCount)
            {
                spinner.SpinOnce(sleep1Threshold: -1);
                continue;
            }
            if (!SleepWhileBiasedReaders(limit)) return false;
            spins = 0;
        }
        return true;
    }

    private bool AnyBiasedReader()
    {
        var slots = _slots;
        for (int i = 0; i < slots.Length; i++)
        {
            // Acquire: a drained slot's readers' critical sections (before their decrement) precede the writer's.
            if (Volatile.Read(ref slots[i].Value) != 0) return true;
        }
        return false;
    }

    /// <summary>
    /// Sleeps on <c>_sync</c> until a biased reader's exit wakes it, unless the slots drain first; false,
    /// without sleeping, once <paramref name="limit"/> is reached. Wakes every
    /// <see cref="DeadHolderCheckMilliseconds"/> to look for a reader whose thread has exited.
    /// </summary>
    private bool SleepWhileBiasedReaders(WaitLimit limit)
    {
        if (limit.Reached) return false;
        bool timedOut;
        lock (_sync)
        {
            // Full fence: publishes Blocked before the re-scan; a biased exit after the scan sees it and pulses under _sync.
            Interlocked.Or(ref _state.Value, Blocked);
            StoreLoadFence();
            if (!AnyBiasedReader()) return true;
            if (limit.Token.IsCancellationRequested) return false; // under _sync, as in Sleep
            int milliseconds = limit.SleepMilliseconds(DeadHolderCheckMilliseconds);
            if (milliseconds == 0) return false;
            Interlocked.Increment(ref s_sleeps); // statistics only
            timedOut = !Monitor.Wait(_sync, milliseconds);
        }
        if (timedOut) ThrowIfAReaderDied();
        return true;
    }

    /// <summary>
    /// Turns the bias back on once the inhibit time has passed. The caller holds a read lock through the
    /// state word, so no writer holds the lock and none can be revoking.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void MaybeRestoreBias(ThreadRecord held)
    {
        held.BiasCheckCountdown = BiasCheckInterval;
        if (Volatile.Read(ref _readBias) != 0) return; // a hint: a racing reader may set it too (same value)
        if ((Volatile.Read(ref _state.Value) & WaitingWriterMask) != 0) return; // a hint: a writer waits and would revoke it at once
        if (Clock.GetTimestamp() - Volatile.Read(ref _inhibitUntil) < 0) return; // atomic 64-bit read, orders nothing
        // Ordered before this reader's release (an RMW on the state word), which precedes any writer's acquire:
        // the next writer sees the bias and revokes it.
        Volatile.Write(ref _readBias, 1);
    }

    /// <summary>Biased readers inside (a snapshot: may include readers backing out).</summary>
    private long BiasedReaderCount()
    {
        long sum = 0;
        var slots = _slots;
        for (int i = 0; i < slots.Length; i++) sum += Volatile.Read(ref slots[i].Value); // snapshot, orders nothing
        return sum;
    }

    /// <summary>
    /// Orders an interlocked write before a later load of another variable on every platform. Each Dekker
    /// hand-shake of the bias (slot, then flag; flag, then slots; slot, then Blocked; Blocked, then slots)
    /// reads a different variable than the one its RMW wrote. On x86/x64 a locked RMW is a full fence (and
    /// this folds away at JIT time); on Arm64 the JIT emits the RMW as an acquire-release atomic (ldaddal,
    /// swpal, ldsetal) with no trailing barrier, and a later Volatile.Read may be an RCpc load (ldapr), which
    /// the architecture lets complete before the RMW's store is visible: both sides could read stale values.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void StoreLoadFence()
    {
        if (!X86Base.IsSupported) Interlocked.MemoryBarrier();
    }
}
