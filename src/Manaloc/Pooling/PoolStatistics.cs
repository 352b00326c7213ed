namespace Manaloc.Pooling;

/// <summary>Counters of a pool (or of a buffer manager, summed over its size classes) since it was created.</summary>
/// <param name="Rents">Objects handed out.</param>
/// <param name="LocalHits">Rents served from the calling thread's own stack, without synchronisation.</param>
/// <param name="SharedTransfers">Batches moved between a thread's stack and the shared tier, either way.</param>
/// <param name="Creations">Objects created by the policy.</param>
/// <param name="Drops">Returned objects not kept: over the cap, rejected by the policy, after Dispose, or (buffer managers) a double return refused. A pool that throws on a double return counts nothing for it.</param>
/// <param name="Trimmed">Idle objects released by trimming (after gen-2 GCs, under memory pressure, or <c>Trim()</c>).</param>
/// <param name="Retained">Idle objects the pool holds now, over all threads.</param>
/// <remarks>A value type snapshot; safe to pass between threads.</remarks>
public readonly record struct PoolStatistics(
    long Rents, long LocalHits, long SharedTransfers, long Creations, long Drops, long Trimmed, long Retained)
{
    /// <summary>Adds two snapshots field by field (used to total size classes or categories).</summary>
    public static PoolStatistics operator +(PoolStatistics left, PoolStatistics right) => new(
        left.Rents + right.Rents, left.LocalHits + right.LocalHits, left.SharedTransfers + right.SharedTransfers,
        left.Creations + right.Creations, left.Drops + right.Drops, left.Trimmed + right.Trimmed, left.Retained + right.Retained);

    /// <summary>Same as the + operator.</summary>
    public static PoolStatistics Add(PoolStatistics left, PoolStatistics right) => left + right;
}
