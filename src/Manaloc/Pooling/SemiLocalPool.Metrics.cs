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
                retained += Volatile.Read(ref local.Count);
            }
            return new PoolStatistics(rents, hits, transfers, creations, drops, trimmed, retained);
        }
    }

    /// <summary>
    /// Stops the pool: idle objects it can reach are dropped (disposed if <see cref="IDisposable"/>),
    /// later returns are dropped, later rents throw <see cref="ObjectDisposedException"/>. Stacks of
    /// live threads are emptied the next time their thread uses the pool.
    /// </summary>
    /// <remarks>Idempotent. If objects' Dispose methods throw, every other object is still dropped and the
    /// pool is still disposed; then the exception is rethrown (an <see cref="AggregateException"/> when
    /// several objects of one batch failed; if the calling thread's own stack fails too, its exception wins).
    /// Thread safety: safe from any thread; a return racing with Dispose may keep its object on its thread's stack until that thread's next use of the pool.</remarks>
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
            foreach (var local in _locals) RequestTrim(local);
        }
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
}
