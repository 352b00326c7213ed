namespace Manaloc.Memory;

/// <summary>A snapshot of a <see cref="NativeSlabAllocator"/>'s counters.</summary>
/// <param name="ReservedBytes">Native bytes held: chunks plus large blocks.</param>
/// <param name="Chunks">Chunks of size classes held (each 128 KB).</param>
/// <param name="LargeBlocks">Live blocks above the largest size class.</param>
/// <param name="Allocations">Allocations since construction.</param>
/// <param name="Frees">Frees since construction.</param>
/// <remarks>
/// Counters are kept per thread without atomics and summed when the snapshot is taken, so while other
/// threads allocate the snapshot is approximate: <see cref="Allocations"/> is exact at some recent moment; a thread's
/// frees are derived from its allocations and the blocks its cache took and gave back, so <see cref="LiveBlocks"/> is
/// off by about what a busy thread does to one bin during the read (a refill or flush: a batch or two), and
/// <see cref="Frees"/> of successive snapshots may step back by as much. Exact while the other threads are still.
/// </remarks>
public readonly record struct SlabStatistics(long ReservedBytes, long Chunks, long LargeBlocks, long Allocations, long Frees)
{
    /// <summary>Blocks handed out and not yet freed.</summary>
    public long LiveBlocks => Allocations - Frees;
}
