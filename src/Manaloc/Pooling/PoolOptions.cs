namespace Manaloc.Pooling;

/// <summary>Sizes and switches of a pool. Validated when the pool is created.</summary>
/// <remarks>
/// The defaults suit objects rented and returned at a high rate by a few threads. Thread safety:
/// an options object is read once by the pool's constructor; do not change it concurrently with that.
/// </remarks>
public sealed class PoolOptions
{
    /// <summary>The pool's name (metrics tag, event text). Null: the pooled type's name.</summary>
    public string? Name { get; set; }

    /// <summary>
    /// Objects moved at once between a thread's stack and the shared tier,
    /// and the batch a <see cref="LockedPool{T}"/> creates when empty. Default 16; 1 to <see cref="LocalCapacity"/>.
    /// </summary>
    public int BatchSize { get; set; } = 16;

    /// <summary>Idle objects one thread keeps for itself. Default 64; 1 to 1,048,576.</summary>
    public int LocalCapacity { get; set; } = 64;

    /// <summary>
    /// Idle objects kept across all threads and the shared tier together; returns beyond it are dropped.
    /// Default: 4 × <see cref="LocalCapacity"/> × processors (at least 256).
    /// </summary>
    public int? MaxRetained { get; set; }

    /// <summary>
    /// Tracks outstanding objects to detect every double return (across threads, or long after the first:
    /// without it only a return of an object still on top of the returning thread's stack is caught) and
    /// foreign returns. Costs a table lookup per operation. Default off.
    /// </summary>
    public bool DebugMode { get; set; }

    /// <summary>Trims idle objects after gen-2 collections and under memory pressure. Default on.</summary>
    public bool TrimAfterGen2 { get; set; } = true;

    /// <summary>
    /// The least time between two gen-2 trimming passes not under memory pressure (see <see cref="Gen2TrimGate"/>):
    /// zero (the default) passes every gen-2 collection; the buffer manager's tiers use <see cref="Gen2TrimGate.BufferInterval"/>.
    /// </summary>
    internal TimeSpan Gen2TrimInterval { get; set; }

    /// <summary>
    /// The idle period: twice per period the pool compares its rents over the last period with the idle
    /// objects it holds and releases the surplus; a period with no rent at all releases everything, so a
    /// quiet pool is back to nothing retained within 1.5 periods of its last rent. Default 10 seconds; <see cref="Timeout.InfiniteTimeSpan"/>
    /// switches it off; otherwise from 1 millisecond to 4,294,967,294 milliseconds (about 49 days).
    /// </summary>
    /// <remarks>
    /// Why: trimming after gen-2 collections frees nothing in a quiet service that never collects. The
    /// check runs on a timer of <see cref="TimeProvider"/>, never on the rent and return paths (they only
    /// count rents, as they did before), so a busy pool pays nothing for it. Idle objects on the stacks of
    /// threads that rented nothing in the period, or have exited, are released too (see
    /// <see cref="SemiLocalPool{T}"/>'s remarks).
    /// </remarks>
    public TimeSpan ReleaseIdleAfter { get; set; } = DefaultReleaseIdleAfter;

    /// <summary>The clock of <see cref="ReleaseIdleAfter"/>'s timer. Default <see cref="System.TimeProvider.System"/>; tests pass a manual clock.</summary>
    public TimeProvider TimeProvider { get; set; } = TimeProvider.System;

    /// <summary>The default of <see cref="ReleaseIdleAfter"/> (and of the buffer manager's option of the same name): 10 seconds.</summary>
    internal static readonly TimeSpan DefaultReleaseIdleAfter = TimeSpan.FromSeconds(10);

    /// <summary>The longest period a timer takes (<see cref="ITimer.Change"/>'s limit).</summary>
    internal static readonly TimeSpan MaxReleaseIdleAfter = TimeSpan.FromMilliseconds(uint.MaxValue - 1);

    /// <summary>Throws when <paramref name="value"/> is neither infinite nor between 1 ms and the timer's limit.</summary>
    internal static void ValidateReleaseIdleAfter(TimeSpan value, TimeProvider? clock)
    {
        if (value != Timeout.InfiniteTimeSpan && (value < TimeSpan.FromMilliseconds(1) || value > MaxReleaseIdleAfter))
            ThrowHelper.ThrowArgumentOutOfRange(nameof(ReleaseIdleAfter), value, "ReleaseIdleAfter must be Timeout.InfiniteTimeSpan (off) or between 1 millisecond and 4,294,967,294 milliseconds.");
        if (clock is null) ThrowHelper.ThrowArgument(nameof(TimeProvider), "TimeProvider must not be null; leave it at TimeProvider.System for the system clock.");
    }

    internal int ResolveMaxRetained() => MaxRetained ?? Math.Max(256, 4 * LocalCapacity * Environment.ProcessorCount);

    internal void Validate()
    {
        if (Name is { Length: 0 }) ThrowHelper.ThrowArgument(nameof(Name), "A pool name must not be empty; leave it null for the type's name.");
        if (LocalCapacity is < 1 or > 1 << 20) ThrowHelper.ThrowArgumentOutOfRange(nameof(LocalCapacity), LocalCapacity, "LocalCapacity must be between 1 and 1,048,576.");
        if (BatchSize < 1 || BatchSize > LocalCapacity) ThrowHelper.ThrowArgumentOutOfRange(nameof(BatchSize), BatchSize, "BatchSize must be between 1 and LocalCapacity.");
        if (MaxRetained is < 0) ThrowHelper.ThrowArgumentOutOfRange(nameof(MaxRetained), MaxRetained, "MaxRetained must not be negative.");
        ValidateReleaseIdleAfter(ReleaseIdleAfter, TimeProvider);
    }
}
