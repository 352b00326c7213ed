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
    /// ones are trimmed after gen-2 collections, all of them under memory pressure, and released once idle
    /// for <see cref="ReleaseIdleAfter"/>).
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
    /// Diagnostic mode: every array given back (by <see cref="BufferManager.Return"/>, a <see cref="RentedBuffer"/>, a
    /// <see cref="PooledBufferWriter"/> or <see cref="PooledBufferStream"/> over this manager, or a <see cref="BufferMemoryPool"/>
    /// owner over it) is filled with <see cref="PoisonByte"/> before anyone can rent it again, so code that still reads it
    /// (a response written from a disposed writer, a span kept past a Return) sees a run of <c>0xDD</c> bytes it can
    /// recognise instead of whatever the next renter writes. Default off.
    /// </summary>
    /// <remarks>
    /// Costs, when on, a fill of the whole array per return (its length in bytes written), and every rent and return takes the
    /// slow path (the per-thread hot buffer is still used, found through the thread's slots instead of the one-compare
    /// fast path). When off it costs nothing on the rent and return fast paths (the switch is folded into the token those
    /// paths already compare). It narrows what a late reader can see, it cannot forbid it: an array rented again and
    /// written before the late read shows the new renter's bytes. Turn it on in tests and Debug builds.
    /// The fill takes the place of <c>clearArray</c>'s zeroing.
    /// </remarks>
    public bool PoisonReturnedBuffers { get; set; }

    /// <summary>The byte <see cref="PoisonReturnedBuffers"/> fills returned arrays with: <c>0xDD</c> ("dead"; in UTF-8 a lead byte without its continuation, so text decoders and JSON readers reject it).</summary>
    public const byte PoisonByte = 0xDD;

    /// <summary>
    /// Debug mode: called for each <see cref="RentedBuffer"/> the GC found unreachable before it was
    /// disposed (its array never went back), besides the <c>Manaloc</c> event source's BufferLeak event.
    /// </summary>
    /// <remarks>Runs on the finalizer thread, some time after the buffer was dropped: keep it short, and do
    /// not throw (an exception it throws is swallowed, so it cannot end the process).</remarks>
    public Action<RentedBufferLeak>? LeakReported { get; set; }

    /// <summary>
    /// Trims idle buffers after gen-2 collections and under memory pressure. Default on. A pass drops what was not rented
    /// since the previous pass, and a collection less than a second (on <see cref="TimeProvider"/>) after the last pass
    /// starts none unless memory is under pressure, so a burst of gen-2 collections cannot make a buffer unused for
    /// milliseconds look idle.
    /// </summary>
    public bool TrimAfterGen2 { get; set; } = true;

    /// <summary>Pooled arrays come from the pinned object heap (set by a <see cref="BufferMemoryPool"/> created with <see cref="BufferMemoryPoolOptions.Pinned"/>).</summary>
    internal bool PinnedArrays { get; set; }

    /// <summary>
    /// The idle period: twice per period the manager compares each size class's rents over the last period
    /// with the idle buffers it holds and releases the surplus; a period with no rent of a class releases all
    /// of its idle buffers, hot buffers and other threads' stacks included, so a quiet manager is back to
    /// nothing retained within 1.5 periods of its last rent. Default 10 seconds; <see cref="Timeout.InfiniteTimeSpan"/> switches it off;
    /// otherwise from 1 millisecond to 4,294,967,294 milliseconds (about 49 days).
    /// </summary>
    /// <remarks>
    /// Why: trimming after gen-2 collections frees nothing in a quiet service that never collects (the
    /// "the pool never gives memory back" complaint). The check runs on a timer of <see cref="TimeProvider"/>
    /// and reads the rent counters the manager keeps anyway: the rent and return paths read no clock and
    /// do no timer work, so a busy service pays nothing for it.
    /// </remarks>
    public TimeSpan ReleaseIdleAfter { get; set; } = Pooling.PoolOptions.DefaultReleaseIdleAfter;

    /// <summary>The clock of <see cref="ReleaseIdleAfter"/>'s timer. Default <see cref="System.TimeProvider.System"/>; tests pass a manual clock.</summary>
    public TimeProvider TimeProvider { get; set; } = TimeProvider.System;

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
        Pooling.PoolOptions.ValidateReleaseIdleAfter(ReleaseIdleAfter, TimeProvider);
    }
}
