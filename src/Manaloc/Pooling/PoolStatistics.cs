namespace Manaloc.Pooling;

/// <summary>Counters of a pool (or of a buffer manager, summed over its size classes) since it was created.</summary>
/// <remarks>
/// A value type snapshot; safe to pass between threads. <see cref="RetainedBytes"/> + <see cref="RentedBytes"/>
/// is what a buffer manager's pooled buffers occupy now, idle or in use.
/// </remarks>
public readonly record struct PoolStatistics
{
    /// <summary>Objects handed out.</summary>
    public long Rents { get; internal init; }

    /// <summary>Rents served from the calling thread's own stack, without synchronisation.</summary>
    public long LocalHits { get; internal init; }

    /// <summary>Batches moved between a thread's stack and the shared tier, either way.</summary>
    public long SharedTransfers { get; internal init; }

    /// <summary>Objects created by the policy.</summary>
    public long Creations { get; internal init; }

    /// <summary>Returned objects not kept: over the cap, rejected by the policy, after Dispose, or (buffer managers) a double return refused. A pool that throws on a double return counts nothing for it.</summary>
    public long Drops { get; internal init; }

    /// <summary>Idle objects released by trimming (after gen-2 GCs, under memory pressure, when idle for <see cref="PoolOptions.ReleaseIdleAfter"/>, or <c>Trim()</c>).</summary>
    public long Trimmed { get; internal init; }

    /// <summary>Idle objects the pool holds now, over all threads.</summary>
    public long Retained { get; internal init; }

    /// <summary>Bytes of the idle buffers a buffer manager holds now (the sum of their lengths); 0 for object pools, whose objects' sizes the pool does not know.</summary>
    public long RetainedBytes { get; internal init; }

    /// <summary>Bytes of pooled-size buffers a buffer manager has handed out and not yet had back: the sum of the lengths rented minus those returned. Rents above the largest class (plain allocations) are not counted. 0 for object pools.</summary>
    public long RentedBytes { get; internal init; }

    /// <summary>Adds two snapshots field by field (used to total size classes or categories).</summary>
    public static PoolStatistics operator +(PoolStatistics left, PoolStatistics right) => new()
    {
        Rents = left.Rents + right.Rents, LocalHits = left.LocalHits + right.LocalHits, SharedTransfers = left.SharedTransfers + right.SharedTransfers,
        Creations = left.Creations + right.Creations, Drops = left.Drops + right.Drops, Trimmed = left.Trimmed + right.Trimmed,
        Retained = left.Retained + right.Retained, RetainedBytes = left.RetainedBytes + right.RetainedBytes, RentedBytes = left.RentedBytes + right.RentedBytes,
    };

    /// <summary>Same as the + operator.</summary>
    public static PoolStatistics Add(PoolStatistics left, PoolStatistics right) => left + right;
}
