using System.Runtime.CompilerServices;
using Manaloc.Diagnostics;
using Manaloc.Pooling;

namespace Manaloc.Buffers;

public sealed partial class BufferManager
{
    // Every thread's front tier, for statistics, trimming and exited-thread cleanup; guarded by _cachesLock.
    private readonly Lock _cachesLock = new();
    private readonly List<BufferThreadCache> _caches = [];

    private void ReturnToClass(BufferThreadCache? cache, int index, byte[] array)
    {
        var pool = _classes[index];
        pool.Return(array);
        if (Volatile.Read(ref _disposed) != 0) return;
        cache ??= CreateCache();
        ref var slot = ref cache.Slots[index];
        if (slot.Stack.IsNone) slot.Stack = pool.CurrentStack();
        slot.StackMayHoldBuffers = slot.Stack.MayHoldItems; // the return may have been dropped (cap) instead
    }

    private void RefuseDoubleReturn(ref BufferThreadCache.ClassSlot slot, byte[] array)
    {
        slot.Drops++;
        ManalocEventSource.Log.DoubleReturn(Name, $"byte[{array.Length}]");
    }

    private BufferThreadCache CreateCache()
    {
        var cache = new BufferThreadCache(_token, Thread.CurrentThread, _classes.Length);
        lock (_cachesLock)
        {
            RemoveExitedThreadsLocked(); // an exited thread's hot buffers go with its cache
            _caches.Add(cache);
        }
        ThreadSlots.Set(_slotId, cache);
        if (_debug is null) t_last = cache; // debug mode keeps every operation on the slow path, where it tracks
        return cache;
    }

    /// <summary>Gen-2 callback: drops hot buffers idle since the previous gen-2 (all under memory pressure), when trimming is on.</summary>
    /// <remarks>Always answers true: the callback keeps watching for the manager's collection (see <see cref="ForgetCaches"/>).</remarks>
    private bool OnGen2()
    {
        if (!_trimAfterGen2 || Volatile.Read(ref _disposed) != 0) return true;
        bool pressure = PoolTier<byte[]>.IsMemoryLoadHigh();
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
                    // Exchange, not a plain store: the owner may be renting this very buffer (see BufferThreadCache).
                    if ((!idleOnly || idle) && Volatile.Read(ref slot.Hot) is not null && Interlocked.Exchange(ref slot.Hot, null) is not null)
                    {
                        trimmed++;
                    }
                }
            }
            _hotTrimmed += trimmed;
        }
        return trimmed;
    }

    private long _hotTrimmed, _retiredHotRents, _retiredHotDrops;

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

    /// <summary>Under the lock: forgets the caches of exited threads, keeping their counters.</summary>
    private void RemoveExitedThreadsLocked()
    {
        for (int c = _caches.Count - 1; c >= 0; c--)
        {
            var cache = _caches[c];
            if (cache.Owner.IsAlive) continue;
            Interlocked.MemoryBarrier(); // the counter loads below must not pass the IsAlive load (Arm64 may reorder loads)
            for (int i = 0; i < _classes.Length; i++)
            {
                _retiredHotRents += cache.Slots[i].Rents; // the owner has exited: its last writes are visible
                _retiredHotDrops += cache.Slots[i].Drops;
            }
            _caches.RemoveAt(c);
        }
    }

    /// <summary>Adds the hot tier's counters of class <paramref name="index"/> (or every class when -1) to <paramref name="stats"/>.</summary>
    private PoolStatistics AddHot(PoolStatistics stats, int index)
    {
        long rents = 0, drops = 0, retained = 0;
        lock (_cachesLock)
        {
            foreach (var cache in _caches)
            {
                for (int i = 0; i < _classes.Length; i++)
                {
                    if (index >= 0 && i != index) continue;
                    ref var slot = ref cache.Slots[i];
                    rents += Volatile.Read(ref slot.Rents); // owner-written counters, read racily (atomic on 64-bit)
                    drops += Volatile.Read(ref slot.Drops);
                    if (Volatile.Read(ref slot.Hot) is not null) retained++;
                }
            }
            if (index < 0)
            {
                rents += _retiredHotRents;
                drops += _retiredHotDrops;
            }
            return stats + new PoolStatistics(rents, rents, 0, 0, drops, index < 0 ? _hotTrimmed : 0, retained);
        }
    }
}
