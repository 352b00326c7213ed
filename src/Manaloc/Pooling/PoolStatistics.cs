namespace Manaloc.Pooling;

/// <summary>Counters of a pool (or of a buffer manager, summed over its size classes) since it was created.</summary>
/// <param name="Rents">Objects handed out.</param>
/// <param name="LocalHits">Rents served from the calling thread's own stack, without synchronisation.</param>
/// <param name="SharedTransfers">Batches moved between a thread's stack and the shared tier, either way.</param>
/// <param name="Creations">Objects created by the policy.</param>
/// <param name="Drops">Returned objects not kept: over the cap, rejected by the policy, after Dispose, or (buffer managers) a double return refused. A pool that throws on a double return counts nothing for it.</param>
/// <param name="Trimmed">Idle objects released by trimming (after gen-2 GCs, under memory pressure, when idle for <see cref="PoolOptions.ReleaseIdleAfter"/>, or <c>Trim()</c>).</param>
/// <param name="Retained">Idle objects the pool holds now, over all threads.</param>
/// <param name="RetainedBytes">Bytes of the idle buffers a buffer manager holds now (the sum of their lengths); 0 for object pools, whose objects' sizes the pool does not know.</param>
/// <param name="RentedBytes">Bytes of pooled-size buffers a buffer manager has handed out and not yet had back: the sum of the lengths rented minus those returned. Rents above the largest class (plain allocations) are not counted. 0 for object pools.</param>
/// <remarks>
/// A value type snapshot; safe to pass between threads. <see cref="RetainedBytes"/> + <see cref="RentedBytes"/>
/// is what a buffer manager's pooled buffers occupy now, idle or in use.
/// </remarks>
public readonly record struct PoolStatistics(
    long Rents, long LocalHits, long SharedTransfers, long Creations, long Drops, long Trimmed, long Retained,
    long RetainedBytes = 0, long RentedBytes = 0)
{
    /// <summary>Adds two snapshots field by field (used to total size classes or categories).</summary>
    public static PoolStatistics operator +(PoolStatistics left, PoolStatistics right) => new(
        left.Rents + right.Rents, left.LocalHits + right.LocalHits, left.SharedTransfers + right.SharedTransfers,
        left.Creations + right.Creations, left.Drops + right.Drops, left.Trimmed + right.Trimmed, left.Retained + right.Retained,
        left.RetainedBytes + right.RetainedBytes, left.RentedBytes + right.RentedBytes);

    /// <summary>Same as the + operator.</summary>
    public static PoolStatistics Add(PoolStatistics left, PoolStatistics right) => left + right;
}
