using System.Runtime.CompilerServices;

namespace Manaloc.Pooling;

public sealed partial class SemiLocalPool<T>
{
    // The shared tier and the list of stacks, guarded by _lock.
    private readonly Lock _lock = new();
    private Slot[] _shared;
    private int _sharedCount;
    private long _sharedOperations;
    private readonly List<Local> _locals = [];
    // Σ credit of every stack + _sharedCount; changed only through Interlocked (see Reserve/Release).
    private int _budget;
    // Counters of stacks whose thread has exited, and of work done without a stack (under _lock or Interlocked).
    private long _retiredRents, _retiredLocalHits, _retiredTransfers, _retiredCreations, _retiredDrops, _retiredTrimmed;
    private long _orphanDrops, _sharedTrimmed;

    [MethodImpl(MethodImplOptions.NoInlining)]
    private T RentSlow(Local? local)
    {
        if (Volatile.Read(ref _disposed) != 0)
        {
            if (local is not null) EmptyOwnStack(local, countAsTrim: false); // a return that raced Dispose may have left objects here
            ThrowHelper.ThrowPoolDisposed(s_kind, Name);
        }
        local ??= CreateLocal();
        ServeTrimRequest(local);
        AssertLocal(local);
        // A trim request sent us here with objects still on the stack (count > 0): serve from it.
        if (local.TryPop(out T? top)) return top;
        int taken = 0;
        lock (_lock)
        {
            taken = Math.Min(_batch, _sharedCount);
            if (taken > 0)
            {
                _sharedCount -= taken;
                Array.Copy(_shared, _sharedCount, local.Items, 0, taken);
                Array.Clear(_shared, _sharedCount, taken);
                _sharedOperations++;
            }
        }
        if (taken > 0)
        {
            // The objects left the shared count (budget -taken) and need credit on this stack (budget +growth).
            int newCredit = Math.Max(local.Credit, taken);
            Release(taken - (newCredit - local.Credit));
            local.Credit = newCredit;
            Volatile.Write(ref local.Count, taken - 1);
            // The refill was stored after Dispose may have drained the shared tier and read this stack's
            // count: look for Closed after publishing the count (the hand-shake of TryPop/TryPush).
            if (Volatile.Read(ref local.Closed) != 0)
            {
                T last = local.Items[taken - 1].Value!; // above Count: never visible to a drain
                local.Items[taken - 1].Value = null;
                local.DrainClosed();
                PoolDrop.Drop(last);
                ThrowHelper.ThrowPoolDisposed(s_kind, Name);
            }
            PublishLimit(local);
            local.SharedTransfers++;
            local.SlowRents++;
            T item = local.Items[taken - 1].Value!;
            local.Items[taken - 1].Value = null;
            AssertLocal(local);
            return item;
        }
        // Nothing idle anywhere. The stack ran dry: give its unused credit back so other threads can
        // retain (credit is the owner's; Limit = 0 sends our next return to the slow path, which reserves again).
        if (local.Credit > 0)
        {
            Release(local.Credit);
            local.Credit = 0;
            local.Limit = 0; // owner-only store; a trimmer only ever stores 0 too
            AssertLocal(local);
        }
        // Create one, outside any lock (a throwing factory changes nothing).
        T created = _policy.Create();
        local.Creations++;
        local.SlowRents++;
        return created;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ReturnSlow(Local? local, T item, bool scan)
    {
        // First of all: a trim request or Dispose below would drop (dispose) the copy the stack holds, then store the object again.
        if (scan && local is not null && local.Holds(item))
        {
            RefuseDuplicate(local, item);
            return; // already on this stack: keeping it twice would hand it to two renters
        }
        if (Volatile.Read(ref _disposed) != 0)
        {
            if (local is not null) EmptyOwnStack(local, countAsTrim: false);
            Interlocked.Increment(ref _orphanDrops); // pool-level counter: the stack may be gone
            PoolDrop.Drop(item);
            return;
        }
        local ??= CreateLocal();
        ServeTrimRequest(local);
        if (local.Count == local.Credit && local.Credit < _localCapacity)
        {
            local.Credit += Reserve(Math.Min(_batch, _localCapacity - local.Credit));
        }
        if (local.Count == _localCapacity)
        {
            SpillToShared(local);
        }
        if (local.Count < local.Credit)
        {
            local.Items[local.Count++].Value = item;
            PublishLimit(local);
            // PublishLimit's Interlocked.Exchange is a full fence before this load; Dispose sets _disposed
            // with Interlocked.Exchange before its lock and RequestTrim pass. So either Dispose's trim
            // request reached this stack after our Limit store (Limit is 0 again), or we see _disposed
            // here: a stack created after, or a request consumed by, Dispose never keeps a later return.
            if (Volatile.Read(ref _disposed) != 0) EmptyOwnStack(local, countAsTrim: false);
            AssertLocal(local);
            return;
        }
        PublishLimit(local);
        local.Drops++; // over the global cap
        PoolDrop.Drop(item);
    }

    /// <summary>Re-opens the fast return path up to the stack's credit, unless a trim request is pending.</summary>
    private static void PublishLimit(Local local)
    {
        // Full fence: orders this store before the TrimRequested load below. The trimmer stores
        // TrimRequested then Limit = 0, so either we see its request or its Limit = 0 lands after ours.
        Interlocked.Exchange(ref local.Limit, local.Credit);
        if (Volatile.Read(ref local.TrimRequested) != 0) local.Limit = 0;
    }

    /// <summary>
    /// Moves the older half of the (full) stack to the shared tier; the stack keeps its credit, so the
    /// shared tier needs budget. The older half, not the top: the newest objects stay where the
    /// duplicate scan of the next returns looks (and where this thread's next rents take them, still in its cache).
    /// </summary>
    private void SpillToShared(Local local)
    {
        int move = Reserve(Math.Max(1, _localCapacity / 2));
        if (move == 0) return;
        lock (_lock)
        {
            if (Volatile.Read(ref _disposed) != 0)
            {
                Release(move); // Dispose has drained the shared tier: keep the objects on the stack, where its drain or the owner's finds them
                return;
            }
            EnsureSharedCapacity(_sharedCount + move);
            var items = local.Items;
            int keep = local.Count - move;
            Array.Copy(items, 0, _shared, _sharedCount, move);
            _sharedCount += move;
            // The slots are shifted under the lock: Dispose's drain of a live stack (DrainLiveStacks) takes
            // the same lock, and Dispose sets _disposed (seen above) before that drain, so no drain runs
            // until the stack is consistent again.
            Array.Copy(items, move, items, 0, keep);
            Array.Clear(items, keep, move);
            local.Count = keep;
            _sharedOperations++;
        }
        local.SharedTransfers++;
        AssertLocal(local);
    }

    private void EnsureSharedCapacity(int needed)
    {
        if (needed > _shared.Length)
        {
            Array.Resize(ref _shared, Math.Min(_maxRetained, Math.Max(needed, _shared.Length * 2)));
        }
    }

    private Local CreateLocal()
    {
        var local = new Local(_token, _localCapacity, Thread.CurrentThread);
        List<T>? orphans;
        lock (_lock)
        {
            orphans = ReclaimExitedThreadsLocked();
            if (Volatile.Read(ref _disposed) != 0) local.Closed = 1; // created after Dispose's pass: closed from the start
            _locals.Add(local);
        }
        DropAll(orphans, quietly: false);
        ThreadSlots.Set(_slotId, local);
        return local;
    }

    /// <summary>Takes up to <paramref name="wanted"/> slots of the global budget; returns how many it got.</summary>
    private int Reserve(int wanted)
    {
        int current = Volatile.Read(ref _budget);
        while (true)
        {
            int grant = Math.Min(wanted, _maxRetained - current);
            if (grant <= 0) return 0;
            // The CAS is the only ordering needed: it keeps Σ credit + shared ≤ cap against other reservers.
            int seen = Interlocked.CompareExchange(ref _budget, current + grant, current);
            if (seen == current) return grant;
            current = seen;
        }
    }

    private void Release(int slots)
    {
        if (slots != 0) Interlocked.Add(ref _budget, -slots); // budget only; no other data is published by it
    }

    private static void DropAll(List<T>? items, bool quietly)
    {
        if (items is null) return;
        if (!quietly)
        {
            PoolDrop.DropAll(items); // every item is dropped; then the first failure (or all of them) is rethrown
            return;
        }
        foreach (var item in items) PoolDrop.DropQuietly(item);
    }
}
