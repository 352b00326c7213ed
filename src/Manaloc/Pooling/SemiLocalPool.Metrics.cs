namespace Manaloc.Pooling;

public sealed partial class SemiLocalPool<T>
{
    /// <inheritdoc/>
    /// <remarks>
    /// Sums the counters of every thread's stack (read without stopping the owners, so a busy pool's
    /// figures are approximate) and the shared tier's. Thread safety: safe from any thread.
    /// </remarks>
    public PoolStatistics GetStatistics()
    {
        lock (_lock)
        {
            long rents = _retiredRents, hits = _retiredLocalHits, transfers = _retiredTransfers, creations = _retiredCreations;
            long drops = _retiredDrops + Volatile.Read(ref _orphanDrops), trimmed = _retiredTrimmed + _sharedTrimmed;
            long retained = _sharedCount;
            foreach (var local in _locals)
            {
                // Owner-written counters, read racily: each read is atomic on 64-bit platforms.
                rents += Volatile.Read(ref local.LocalHits) + Volatile.Read(ref local.SlowRents);
                hits += Volatile.Read(ref local.LocalHits);
                transfers += Volatile.Read(ref local.SharedTransfers);
                creations += Volatile.Read(ref local.Creations);
                drops += Volatile.Read(ref local.Drops);
                trimmed += Volatile.Read(ref local.Trimmed);
                // A closed stack's count is stale: Dispose drained its slots without writing the owner's count.
                if (Volatile.Read(ref local.Closed) == 0) retained += Volatile.Read(ref local.Count);
            }
            return new PoolStatistics(rents, hits, transfers, creations, drops, trimmed, retained);
        }
    }

    /// <summary>
    /// Stops the pool: idle objects it can reach are dropped (disposed if <see cref="IDisposable"/>),
    /// later returns are dropped, later rents throw <see cref="ObjectDisposedException"/>. Every idle
    /// object is dropped, those on the stacks of other live threads included (objects rented and not
    /// yet returned are the caller's: their later return drops them).
    /// </summary>
    /// <remarks>Idempotent. If objects' Dispose methods throw, every other object is still dropped and the
    /// pool is still disposed; then the exception is rethrown (an <see cref="AggregateException"/> when
    /// several objects of one batch failed; if the calling thread's own stack fails too, its exception wins).
    /// Thread safety: safe from any thread; a return racing with Dispose drops its object on its own thread (see <see cref="DrainLiveStacks"/>).</remarks>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0) return; // the first caller disposes; the flag is read by every slow path
        List<T>? dropped;
        lock (_lock)
        {
            dropped = ReclaimExitedThreadsLocked() ?? [];
            for (int i = 0; i < _sharedCount; i++) dropped.Add(_shared[i].Value!);
            Array.Clear(_shared, 0, _sharedCount);
            _retiredDrops += _sharedCount;
            Release(_sharedCount);
            _sharedCount = 0;
            foreach (var local in _locals)
            {
                Volatile.Write(ref local.Closed, 1);
                RequestTrim(local);
            }
        }
        DrainLiveStacks(dropped);
        // A throwing object Dispose neither stops the other drops nor leaves the pool registered or its slot id taken.
        try
        {
            DropAll(dropped, quietly: false);
        }
        finally
        {
            try
            {
                var own = System.Runtime.CompilerServices.Unsafe.As<Local?>(ThreadSlots.Get(_slotId, _token));
                if (own is not null) EmptyOwnStack(own, countAsTrim: false);
            }
            finally
            {
                PoolMetrics.Unregister(this);
                _lease.Release();
            }
        }
    }

    /// <summary>
    /// Dispose's pass over the stacks of threads that are still alive: every stack has been marked
    /// <c>Closed</c>; this takes what they hold into <paramref name="dropped"/>.
    /// </summary>
    /// <remarks>
    /// Memory ordering: an asymmetric Dekker hand-shake. An owner publishes its stack change (a claim of
    /// the top slot in <c>TryPop</c>, a new count in <c>TryPush</c> or a refill) and then reads
    /// <c>Closed</c>, with no fence on its fast path. Here, <c>Closed = 1</c> is stored for every stack,
    /// then <see cref="Interlocked.MemoryBarrierProcessWide"/> makes every processor serialise (each
    /// owner's earlier stores become visible, and its later loads see <c>Closed</c>), and only then the
    /// counts are read. So for each owner operation either this pass sees its count, or the owner sees
    /// <c>Closed</c> and drains its own stack. Both sides take slots with
    /// <see cref="Interlocked.Exchange{T}(ref T, T)"/>, so an object both reach is dropped once, and a
    /// slot an owner has claimed (above the count this pass read) is never taken from under it.
    /// </remarks>
    private void DrainLiveStacks(List<T> dropped)
    {
        Interlocked.MemoryBarrierProcessWide();
        lock (_lock)
        {
            foreach (var local in _locals)
            {
                var taken = local.TakeAll(Volatile.Read(ref local.Count));
                if (taken is null) continue;
                dropped.AddRange(taken);
                _retiredDrops += taken.Count;
            }
        }
    }
}
