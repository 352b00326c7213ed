using Manaloc.Diagnostics;
using Manaloc.Pooling;

namespace Manaloc.Buffers;

public sealed partial class BufferManager
{
    /// <summary>Drops idle buffers of every class (each thread's own stack the next time that thread returns a buffer).</summary>
    /// <remarks>Thread safety: safe from any thread.</remarks>
    public void Trim()
    {
        long hot = TrimHot(idleOnly: false);
        if (hot > 0) Diagnostics.ManalocEventSource.Log.PoolTrimmed(Name, hot, "requested: hot buffers");
        foreach (var pool in _classes) pool.Trim();
    }

    /// <summary>
    /// Gen-2 callback: drops hot buffers idle since the previous pass (all under memory pressure), when trimming is on.
    /// A collection less than <see cref="Gen2TrimGate.BufferInterval"/> after the last pass starts none (unless under
    /// pressure), so a burst of gen-2 collections cannot make a buffer unused for milliseconds look idle.
    /// </summary>
    /// <remarks>Always answers true: the callback keeps watching for the manager's collection (see <see cref="ForgetCaches"/>).</remarks>
    private bool OnGen2()
    {
        if (!_trimAfterGen2 || Volatile.Read(ref _disposed) != 0) return true;
        bool pressure = PoolTier<byte[]>.IsMemoryLoadHigh();
        if (!_gen2Gate.Pass(pressure)) return true; // under a second since the last pass: "not rented since" would not mean idle
        long trimmed = TrimHot(idleOnly: !pressure);
        if (trimmed > 0) ManalocEventSource.Log.PoolTrimmed(Name, trimmed, pressure ? "memory pressure" : "gen-2 GC: idle hot buffers");
        return true;
    }

    /// <summary>Takes hot buffers away from every thread (only idle ones when <paramref name="idleOnly"/>); returns how many.</summary>
    private long TrimHot(bool idleOnly)
    {
        long trimmed = 0;
        lock (_cachesLock)
        {
            RemoveExitedThreadsLocked();
            foreach (var cache in _caches)
            {
                for (int i = 0; i < _classes.Length; i++)
                {
                    ref var slot = ref cache.Slots[i];
                    long rents = Volatile.Read(ref slot.Rents); // racy snapshot: only "changed or not" matters
                    bool idle = rents == slot.RentsAtLastGen2;
                    slot.RentsAtLastGen2 = rents;
                    if ((!idleOnly || idle) && TakeHot(ref slot))
                    {
                        _hotTrimmed[i]++;
                        trimmed++;
                    }
                }
            }
        }
        return trimmed;
    }

    /// <summary>Takes a thread's hot buffer away, if it holds one (any thread, under the caches' lock).</summary>
    /// <remarks>Exchange, not a plain store: the owner may be renting this very buffer with a plain load and
    /// store; the buffer is then either rented or forgotten here, never both kept and handed out (see BufferThreadCache).</remarks>
    private static bool TakeHot(ref BufferThreadCache.ClassSlot slot)
        => Volatile.Read(ref slot.Hot) is not null && Interlocked.Exchange(ref slot.Hot, null) is not null;

    /// <summary>
    /// The idle-release timer's tick (twice per <see cref="BufferManagerOptions.ReleaseIdleAfter"/>): per size
    /// class, the rents of the last period are the demand, and what the class retains beyond it is released:
    /// first by its pool (<see cref="PoolTier{T}.ReleaseIdle"/>: the shared tier, then the stacks of threads
    /// that rented nothing from it), then the hot buffers of threads that rented none of the class in the
    /// last period. A period without a rent of a class releases all of that class's idle buffers.
    /// </summary>
    /// <remarks>
    /// Reads only counters the rent and return paths keep anyway (no clock, no flag on them). A hot buffer
    /// is taken with an exchange (<see cref="TakeHot"/>); a thread's stack is drained by the pool's
    /// hand-shake (see <c>SemiLocalPool.ReleaseIdle</c>). Runs on a timer thread; ticks never overlap.
    /// </remarks>
    private void OnIdleCheck()
    {
        if (Volatile.Read(ref _disposed) != 0) return;
        long releasedHot = 0;
        for (int i = 0; i < _classes.Length; i++)
        {
            var pool = _classes[i].GetStatistics();
            var hot = HotCounters(i);
            long rents = pool.Rents + hot.Rents;
            long demand = _idleWindows[i].Advance(rents);
            long retained = pool.Retained + hot.Retained;
            // The pool keeps what the hot buffers do not cover of the demand; then quiet hot buffers go.
            // Both are called even without a surplus: each pass notes every thread's rents, so "quiet"
            // always means "no rent of this class in the last period" (two checks).
            long released = _classes[i].ReleaseIdle(Math.Max(0, demand - hot.Retained));
            releasedHot += ReleaseQuietHot(i, retained - released - demand);
        }
        if (releasedHot > 0) ManalocEventSource.Log.PoolTrimmed(Name, releasedHot, "idle: hot buffers beyond the period's rents");
    }

    /// <summary>Takes up to <paramref name="surplus"/> hot buffers of class <paramref name="index"/> from threads that rented none of it in the last period.</summary>
    private long ReleaseQuietHot(int index, long surplus)
    {
        long released = 0;
        lock (_cachesLock)
        {
            RemoveExitedThreadsLocked();
            foreach (var cache in _caches)
            {
                ref var slot = ref cache.Slots[index];
                long rents = Volatile.Read(ref slot.Rents); // racy snapshot: only "changed or not" matters
                bool quiet = slot.IdleWindow.Advance(rents) == 0;
                if (quiet && released < surplus && TakeHot(ref slot)) released++;
            }
            _hotTrimmed[index] += released;
        }
        return released;
    }

    /// <summary>
    /// On the finalizer thread, once the manager has been collected without Dispose: clears every
    /// thread's hot buffers and stack references (still reachable from the threads' slot arrays) and frees
    /// the slot id. No owner can run manager code any more, so the plain stores race with nobody.
    /// </summary>
    private static void ForgetCaches(List<BufferThreadCache> caches, Lock cachesLock, SlotLease lease)
    {
        try
        {
            lock (cachesLock)
            {
                foreach (var cache in caches) Array.Clear(cache.Slots);
                caches.Clear();
            }
        }
        finally
        {
            lease.Release();
        }
    }

    /// <summary>
    /// Under the lock: forgets the caches of exited threads, keeping their counters; their hot buffers go
    /// with them (the thread's slot array died with the thread), counted as trimmed.
    /// </summary>
    private void RemoveExitedThreadsLocked()
    {
        for (int c = _caches.Count - 1; c >= 0; c--)
        {
            var cache = _caches[c];
            if (cache.Owner.IsAlive) continue;
            Interlocked.MemoryBarrier(); // the counter loads below must not pass the IsAlive load (Arm64 may reorder loads)
            for (int i = 0; i < _classes.Length; i++)
            {
                ref var slot = ref cache.Slots[i];
                _retiredRents[i] += slot.Rents; // the owner has exited: its last writes are visible
                _retiredReturns[i] += slot.Returns;
                _retiredDrops[i] += slot.Drops;
                if (slot.Hot is not null) _hotTrimmed[i]++;
                slot.Hot = null;
            }
            _caches.RemoveAt(c);
        }
    }
}
