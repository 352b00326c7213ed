namespace Manaloc.Buffers;

/// <summary>Sizes and switches of a <see cref="BufferManager"/>. Validated when the manager is created.</summary>
/// <remarks>Thread safety: read once by the constructor; do not change it concurrently with that.</remarks>
public sealed class BufferManagerOptions
{
    /// <summary>The manager's name (metrics tag, event text). Default <c>buffers</c>.</summary>
    public string Name { get; set; } = "buffers";

    /// <summary>
    /// The largest pooled buffer: a power of two from 16 B to 1 GiB. Larger rents are plain allocations.
    /// Default 64 MiB (large classes keep few buffers: see <see cref="MaxRetainedBytesPerClass"/>; idle
    /// ones are trimmed after gen-2 collections, all of them under memory pressure).
    /// </summary>
    public int MaxBufferSize { get; set; } = 64 << 20;

    /// <summary>Buffers of one size class a thread keeps for itself. Default 8.</summary>
    public int BuffersPerThread { get; set; } = 8;

    /// <summary>Buffers moved at once between a thread and the shared tier of a class. Default 4; 1 to <see cref="BuffersPerThread"/>.</summary>
    public int BatchSize { get; set; } = 4;

    /// <summary>
    /// Bytes retained per size class across all threads' stacks and the shared tier (each thread may
    /// also hold one hot buffer per class). Classes up to 2 MiB keep at least <see cref="BuffersPerThread"/>
    /// buffers, larger ones at least one; no class keeps more than 4,096. Default 16 MiB.
    /// </summary>
    public long MaxRetainedBytesPerClass { get; set; } = 16L << 20;

    /// <summary>
    /// Tracks outstanding buffers to detect double and foreign returns exactly (costs a table lookup per
    /// operation), and reports a <see cref="RentedBuffer"/> that was never disposed with the stack where it
    /// was rented (costs a stack capture per <see cref="BufferManager.RentBuffer"/>). Default off.
    /// </summary>
    public bool DebugMode { get; set; }

    /// <summary>
    /// Debug mode: called for each <see cref="RentedBuffer"/> the GC found unreachable before it was
    /// disposed (its array never went back), besides the <c>Manaloc</c> event source's BufferLeak event.
    /// </summary>
    /// <remarks>Runs on the finalizer thread, some time after the buffer was dropped: keep it short, and do
    /// not throw (an exception it throws is swallowed, so it cannot end the process).</remarks>
    public Action<RentedBufferLeak>? LeakReported { get; set; }

    /// <summary>Trims idle buffers after gen-2 collections and under memory pressure. Default on.</summary>
    public bool TrimAfterGen2 { get; set; } = true;

    /// <summary>Pooled arrays come from the pinned object heap (set by a <see cref="BufferMemoryPool"/> created with <see cref="BufferMemoryPoolOptions.Pinned"/>).</summary>
    internal bool PinnedArrays { get; set; }

    internal void Validate()
    {
        if (string.IsNullOrEmpty(Name)) ThrowHelper.ThrowArgument(nameof(Name), "A buffer manager needs a non-empty name.");
        if (MaxBufferSize < 16 || MaxBufferSize > 1 << 30 || (MaxBufferSize & (MaxBufferSize - 1)) != 0)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(MaxBufferSize), MaxBufferSize, "MaxBufferSize must be a power of two from 16 to 1,073,741,824.");
        if (BuffersPerThread is < 1 or > 4096)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(BuffersPerThread), BuffersPerThread, "BuffersPerThread must be between 1 and 4,096.");
        if (BatchSize < 1 || BatchSize > BuffersPerThread)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(BatchSize), BatchSize, "BatchSize must be between 1 and BuffersPerThread.");
        if (MaxRetainedBytesPerClass < 0)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(MaxRetainedBytesPerClass), MaxRetainedBytesPerClass, "MaxRetainedBytesPerClass must not be negative.");
    }
}
