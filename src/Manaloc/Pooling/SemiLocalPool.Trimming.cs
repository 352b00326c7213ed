using System.Runtime.CompilerServices;
using Manaloc.Diagnostics;

namespace Manaloc.Pooling;

public sealed partial class SemiLocalPool<T>
{
    /// <inheritdoc/>
    /// <remarks>
    /// Drops the shared tier and the stacks of exited threads now, and the calling thread's own stack;
    /// other live threads empty their stacks and give back their budget credit the next time they use
    /// the pool's slow path. A thread that never uses the pool again keeps its stack's objects until it
    /// exits, or until an idle release (<see cref="PoolOptions.ReleaseIdleAfter"/>) drains its stack.
    /// Thread safety: safe from any thread.
    /// </remarks>
    public void Trim() => TrimCore(idleOnly: false, reason: "requested");

    /// <summary>Gen-2 callback: trims idle objects, or everything under memory pressure (when trimming is on), at most once per <see cref="PoolOptions.Gen2TrimInterval"/> unless under pressure.</summary>
    /// <remarks>Always answers true: the callback keeps watching for the pool's collection (see <see cref="ForgetStacks"/>).</remarks>
    private bool OnGen2()
    {
        if (!_trimAfterGen2 || Volatile.Read(ref _disposed) != 0) return true;
        bool pressure = PressureProbe?.Invoke() ?? IsMemoryLoadHigh();
        if (!_gen2Gate.Pass(pressure)) return true; // too soon after the last pass for "idle since then" to mean idle
        TrimCore(idleOnly: !pressure, reason: pressure ? "memory pressure" : "gen-2 GC, idle since the previous one");
        return true;
    }

    /// <summary>Tests replace the memory-load check of this pool's gen-2 pass.</summary>
    internal Func<bool>? PressureProbe { get; set; }

    /// <summary>True when the machine's memory load is at 90 % of the GC's high-load threshold or more.</summary>
    internal static bool IsMemoryLoadHigh()
    {
        var info = GC.GetGCMemoryInfo();
        return info.HighMemoryLoadThresholdBytes > 0 && info.MemoryLoadBytes >= info.HighMemoryLoadThresholdBytes * 9 / 10;
    }

    /// <summary>
    /// Reclaims exited threads' stacks, drops the shared tier (when <paramref name="idleOnly"/>: only if
    /// no thread used it since the last pass) and asks stacks to empty themselves (when idleOnly: only
    /// those that rented nothing since the last pass).
    /// </summary>
    private void TrimCore(bool idleOnly, string reason)
    {
        List<T>? dropped;
        lock (_lock)
        {
            dropped = ReclaimExitedThreadsLocked();
            bool sharedIdle = !idleOnly || _sharedOperations == _sharedOperationsAtLastGen2;
            _sharedOperationsAtLastGen2 = _sharedOperations;
            if (sharedIdle && _sharedCount > 0)
            {
                dropped ??= new List<T>(_sharedCount);
                _trimmedByPool += TakeSharedLocked(dropped);
            }
            foreach (var local in _locals)
            {
                long rents = Volatile.Read(ref local.LocalHits) + Volatile.Read(ref local.SlowRents); // racy snapshot of the owner's counter; only "changed or not" matters
                bool idle = rents == local.RentsAtLastGen2;
                local.RentsAtLastGen2 = rents;
                // Credit > 0 (not Count > 0): an empty stack that still holds credit gives it back on its next slow path.
                if ((!idleOnly || idle) && Volatile.Read(ref local.Credit) > 0) RequestTrim(local);
            }
        }
        if (dropped is { Count: > 0 })
        {
            ManalocEventSource.Log.PoolTrimmed(Name, dropped.Count, reason);
        }
        DropAll(dropped, quietly: true);
        var own = Unsafe.As<Local?>(ThreadSlots.Get(_slotId, _token));
        if (own is not null && !idleOnly) ServeTrimRequest(own);
    }

    private long _sharedOperationsAtLastGen2 = -1;

    /// <summary>
    /// On the finalizer thread, once the pool has been collected without Dispose: clears every thread's
    /// stack (still reachable from the threads' slot arrays) so its objects can be collected, and frees
    /// the slot id. No owner can run pool code any more (that would need the pool), so the plain stores
    /// race with nobody; the objects are not disposed (no user code on the finalizer thread).
    /// </summary>
    private static void ForgetStacks(List<Local> locals, Lock gate, SlotLease lease)
    {
        try
        {
            lock (gate)
            {
                foreach (var local in locals)
                {
                    Array.Clear(local.Items);
                    local.Count = 0;
                    local.Credit = 0;
                    local.Limit = 0;
                }
                locals.Clear();
            }
        }
        finally
        {
            lease.Release();
        }
    }

    private static void RequestTrim(Local local)
    {
        Volatile.Write(ref local.TrimRequested, 1); // before Limit = 0: an owner that sees Limit 0 finds the request (see PublishLimit)
        Volatile.Write(ref local.Limit, 0); // sends the owner's next return to the slow path
    }

    /// <summary>On the owner thread: empties the stack if a trim (or Dispose) asked for it.</summary>
    private void ServeTrimRequest(Local local)
    {
        if (Volatile.Read(ref local.TrimRequested) == 0) return;
        if (Interlocked.Exchange(ref local.TrimRequested, 0) == 0) return; // take the request once
        EmptyOwnStack(local, countAsTrim: true);
    }

    /// <summary>On the owner thread: drops every object on its stack and gives its credit back.</summary>
    /// <remarks>The stack is consistent (empty, no credit) before any object's Dispose runs, so a throwing Dispose leaves no hole.</remarks>
    private void EmptyOwnStack(Local local, bool countAsTrim)
    {
        // Exchanges, not plain loads: once the pool is disposed, Dispose may be draining this stack too (see DrainLiveStacks).
        List<T>? dropped = local.TakeAll(local.Count);
        int count = dropped?.Count ?? 0;
        Volatile.Write(ref local.Count, 0);
        Release(local.Credit);
        local.Credit = 0;
        local.Limit = 0;
        if (countAsTrim) local.Trimmed += count;
        else local.Drops += count;
        AssertLocal(local);
        if (count > 0 && countAsTrim) ManalocEventSource.Log.PoolTrimmed(Name, count, "thread stack emptied on request");
        DropAll(dropped, quietly: false);
    }

    /// <summary>
    /// Under the lock: moves the objects of stacks whose thread has exited to the shared tier (their
    /// credit becomes shared count; the rest of it is released), folds their counters into the pool's,
    /// and forgets them. Returns objects to drop if the pool is disposed.
    /// </summary>
    private List<T>? ReclaimExitedThreadsLocked()
    {
        List<T>? drop = null;
        bool disposed = Volatile.Read(ref _disposed) != 0;
        for (int i = _locals.Count - 1; i >= 0; i--)
        {
            var local = _locals[i];
            if (local.Owner.IsAlive) continue;
            // Full fence: the loads of the stack below must not be satisfied before the IsAlive load
            // (load-load reordering is allowed on Arm64); thread exit published the owner's last writes.
            Interlocked.MemoryBarrier();
            // The owner has exited: nobody else writes this stack any more. Taken slot by slot, skipping
            // empty ones: an idle release may have drained a closed stack without writing its count.
            var taken = local.TakeAll(local.Count);
            int count = taken?.Count ?? 0;
            if (disposed)
            {
                if (taken is not null) (drop ??= []).AddRange(taken);
                _retiredDrops += count;
                Release(local.Credit);
            }
            else
            {
                EnsureSharedCapacity(_sharedCount + count);
                for (int k = 0; k < count; k++) _shared[_sharedCount + k].Value = taken![k];
                _sharedCount += count;
                Release(local.Credit - count); // count slots of credit become shared count
            }
            Array.Clear(local.Items);
            local.Count = 0;
            local.Credit = 0;
            _retiredRents += local.LocalHits + local.SlowRents;
            _retiredLocalHits += local.LocalHits;
            _retiredTransfers += local.SharedTransfers;
            _retiredCreations += local.Creations;
            _retiredDrops += local.Drops;
            _retiredTrimmed += local.Trimmed;
            _locals.RemoveAt(i);
        }
        return drop;
    }

    /// <summary>
    /// The idle-release timer's tick (twice per period): the rents of the last period are the demand; what the
    /// pool retains beyond it is released (see <see cref="ReleaseIdle"/>). A period without a rent releases everything.
    /// </summary>
    private void OnIdleCheck()
    {
        if (Volatile.Read(ref _disposed) != 0) return;
        long rents = GetStatistics().Rents;
        ReleaseIdle(_idleWindow.Advance(rents)); // ticks never overlap (IdleReleaseTimer): no race on the field
    }

    /// <summary>
    /// Releases idle objects beyond <paramref name="keep"/>: stacks of exited threads go to the shared
    /// tier, then the shared tier is released, then, while there is still a surplus, the whole stacks of
    /// threads that rented nothing over the last two checks (one idle period) are drained from this thread. Returns how
    /// many objects were released (dropped quietly, counted as trimmed).
    /// </summary>
    /// <remarks>
    /// <para>Memory ordering of the drain of a live, quiet thread's stack (the hand-shake of
    /// <see cref="DrainLiveStacks"/>, made undoable): under the lock, the stack is marked
    /// <c>Closed</c> (and <c>ClosedByRelease</c>) and asked to trim (<c>TrimRequested</c> then
    /// <c>Limit = 0</c>, so its next return goes to the slow path). Then, outside the lock,
    /// <see cref="Interlocked.MemoryBarrierProcessWide"/> serialises every processor: each owner store to
    /// the stack's count made before it is visible to us, and each owner load after it sees
    /// <c>Closed</c>. Then, under the lock again, the count is read and slots [0, count) are taken with
    /// exchanges. The owner publishes every change of its count (claim in <c>TryPop</c>, push in
    /// <c>TryPush</c>, refill, slow-path store followed by a full fence) before it reads <c>Closed</c>, so
    /// for each owner operation either this drain saw its count (a claimed slot lies above it and is never
    /// taken from under the owner; a pushed one is taken here), or the owner saw <c>Closed</c>: then
    /// <c>TryPop</c> un-claims and goes to the slow path, <c>TryPush</c> and the slow paths drain the
    /// stack themselves, with exchanges, so an object both reach is taken once.</para>
    /// <para>Only the owner reopens a stack an idle release closed, on its next slow path, under the lock
    /// (<see cref="ReopenLocked"/>): it clears <c>ClosedByRelease</c>, which the second half of this drain
    /// checks under the same lock, so a drain never reads the count of a stack its owner has reopened (and
    /// perhaps refilled) without the barrier's ordering. Dispose's close is never undone.</para>
    /// </remarks>
    /// <param name="keep">Idle objects to keep.</param>
    /// <param name="quietOnly">False: drain live threads' stacks whether or not they rented over the last checks (a caller
    /// that knows the process has gone quiet, <see cref="Buffers.BufferMemoryPool.Trim"/>); the drain's hand-shake is the same,
    /// so an owner renting meanwhile keeps what it has claimed.</param>
    internal long ReleaseIdle(long keep, bool quietOnly = true)
    {
        List<T>? released = null;
        List<Local>? closing = null;
        lock (_lock)
        {
            if (Volatile.Read(ref _disposed) != 0) return 0;
            released = ReclaimExitedThreadsLocked(); // null: not disposed, so exited stacks move to the shared tier
            long retained = _sharedCount;
            foreach (var local in _locals)
            {
                if (Volatile.Read(ref local.Closed) == 0) retained += Volatile.Read(ref local.Count); // racy read of the owner's count: an estimate
            }
            long surplus = retained - Math.Max(0, keep);
            int fromShared = (int)Math.Clamp(surplus, 0, _sharedCount);
            if (fromShared > 0)
            {
                // The newest objects, from the top: idle objects are interchangeable.
                released ??= new List<T>(fromShared);
                for (int i = _sharedCount - fromShared; i < _sharedCount; i++) released.Add(_shared[i].Value!);
                Array.Clear(_shared, _sharedCount - fromShared, fromShared);
                _sharedCount -= fromShared;
                Release(fromShared);
                _trimmedByPool += fromShared;
                surplus -= fromShared;
            }
            foreach (var local in _locals)
            {
                long rents = Volatile.Read(ref local.LocalHits) + Volatile.Read(ref local.SlowRents); // racy snapshot; only "changed or not" matters
                bool quiet = !quietOnly || local.IdleWindow.Advance(rents) == 0; // a forced release leaves the idle windows where the timer left them
                if (!quiet || surplus <= 0 || Volatile.Read(ref local.Closed) != 0) continue;
                int count = Volatile.Read(ref local.Count);
                if (count <= 0) continue;
                Volatile.Write(ref local.Closed, 1); // before the barrier below (see the remarks)
                local.ClosedByRelease = 1;
                RequestTrim(local);
                (closing ??= []).Add(local);
                surplus -= count;
            }
        }
        if (closing is not null)
        {
            BetweenCloseAndDrain?.Invoke();
            Interlocked.MemoryBarrierProcessWide();
            lock (_lock)
            {
                foreach (var local in closing)
                {
                    if (local.ClosedByRelease == 0) continue; // reopened by its owner in between: busy again, and not ours to drain
                    var taken = local.TakeAll(Volatile.Read(ref local.Count));
                    if (taken is null) continue;
                    (released ??= []).AddRange(taken);
                    _trimmedByPool += taken.Count;
                }
            }
        }
        if (released is not { Count: > 0 }) return 0;
        ManalocEventSource.Log.PoolTrimmed(Name, released.Count, "idle: retained more than the period's rents");
        DropAll(released, quietly: true);
        return released.Count;
    }

    /// <summary>Tests: runs in <see cref="ReleaseIdle"/> between closing quiet stacks and draining them (where an owner may reopen its stack).</summary>
    internal Action? BetweenCloseAndDrain { get; set; }

    /// <summary>On the owner thread: reopens its stack if an idle release closed it (see <see cref="ReleaseIdle"/>).</summary>
    private void ReopenIfReleased(Local local)
    {
        if (Volatile.Read(ref local.Closed) == 0) return; // only a drain sets it, and only the owner (us) clears an idle release's
        List<T>? left;
        lock (_lock)
        {
            left = ReopenLocked(local);
        }
        DropAll(left, quietly: true);
    }

    /// <summary>
    /// On the owner thread, under the lock: if an idle release closed the stack (and the pool is not
    /// disposed), takes what the drain left (the drain holds this lock, so it is finished), empties the
    /// stack and opens it again. Returns the objects left, to drop outside the lock.
    /// </summary>
    private List<T>? ReopenLocked(Local local)
    {
        if (local.ClosedByRelease == 0 || Volatile.Read(ref _disposed) != 0) return null;
        var left = local.TakeAll(local.Count);
        Volatile.Write(ref local.Count, 0);
        local.Trimmed += left?.Count ?? 0;
        local.ClosedByRelease = 0;
        Volatile.Write(ref local.Closed, 0); // seen by our own fast paths; the next drain closes it again under the lock
        return left;
    }

    /// <summary>Stacks registered now (live threads plus exited ones not yet reclaimed); for tests.</summary>
    internal int RegisteredThreadStacks
    {
        get
        {
            lock (_lock) return _locals.Count;
        }
    }

    /// <summary>Slots of the global budget in use (≥ retained); for tests.</summary>
    internal int BudgetInUse => Volatile.Read(ref _budget);
}
