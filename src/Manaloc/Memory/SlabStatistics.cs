namespace Manaloc.Memory;

/// <summary>A snapshot of a <see cref="NativeSlabAllocator"/>'s counters.</summary>
/// <remarks>
/// Counters are kept per thread without atomics and summed when the snapshot is taken, so while other
/// threads allocate the snapshot is approximate: <see cref="Allocations"/> is exact at some recent moment; a thread's
/// frees are derived from its allocations and the blocks its cache took and gave back, so <see cref="LiveBlocks"/> is
/// off by about what a busy thread does to one bin during the read (a refill or flush: a batch or two), and
/// <see cref="Frees"/> of successive snapshots may step back by as much. Exact while the other threads are still.
/// </remarks>
public readonly record struct SlabStatistics
{
    /// <summary>Allocations since construction.</summary>
    public long Allocations { get; internal init; }

    /// <summary>Frees since construction.</summary>
    public long Frees { get; internal init; }

    /// <summary>Blocks handed out and not yet freed.</summary>
    public long LiveBlocks => Allocations - Frees;

    /// <summary>Native bytes held: chunks plus large blocks.</summary>
    public long ReservedBytes { get; internal init; }

    /// <summary>Chunks of size classes held (each 128 KB).</summary>
    public long Chunks { get; internal init; }

    /// <summary>Live blocks above the largest size class.</summary>
    public long LargeBlocks { get; internal init; }
}
