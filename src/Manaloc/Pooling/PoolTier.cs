namespace Manaloc.Pooling;

/// <summary>
/// The pooling tier as other areas use it (the buffer manager: one tier per size class): a
/// semi-local pool's rent and return without the policy's reset, debug tracking or metrics
/// registration, plus a handle on the calling thread's stack to ask whether it may hold items.
/// Nothing else of <see cref="SemiLocalPool{T}"/>'s state is reachable through it.
/// </summary>
/// <remarks>
/// A sealed class with non-virtual members, so every call inlines into the caller (no interface
/// dispatch on the buffer manager's paths). Duplicate returns to the calling thread's stack are
/// refused (scanned), as a buffer manager needs. Thread safety: that of <see cref="SemiLocalPool{T}"/>.
/// </remarks>
internal sealed class PoolTier<T> : IDisposable where T : class
{
    private readonly SemiLocalPool<T> _pool;

    public PoolTier(PoolPolicy<T> policy, PoolOptions options)
        => _pool = new SemiLocalPool<T>(policy, options, register: false, DuplicateReturns.Refuse);

    /// <summary>An idle item (the calling thread's stack first, then the shared tier) or a new one.</summary>
    /// <exception cref="ObjectDisposedException">The tier was disposed.</exception>
    public T Rent() => _pool.RentCore();

    /// <summary>Keeps <paramref name="item"/> (dropped when full or disposed; refused when already on this thread's stack).</summary>
    public void Return(T item) => _pool.ReturnCore(item);

    /// <summary>The calling thread's stack (<see cref="ThreadStack.IsNone"/> until the thread has used the tier).</summary>
    public ThreadStack CurrentStack() => new(_pool.CurrentLocal());

    public PoolStatistics GetStatistics() => _pool.GetStatistics();

    public void Trim() => _pool.Trim();

    /// <summary>Releases idle items beyond <paramref name="keep"/> (see <see cref="SemiLocalPool{T}.ReleaseIdle"/>); returns how many.</summary>
    public long ReleaseIdle(long keep) => _pool.ReleaseIdle(keep);

    /// <summary>Releases every idle item now, live threads' stacks included (see <see cref="SemiLocalPool{T}.ReleaseIdle"/>); returns how many.</summary>
    public long ReleaseAllIdle() => _pool.ReleaseIdle(0, quietOnly: false);

    public void Dispose() => _pool.Dispose();

    /// <summary>The memory-pressure test the pools' gen-2 trimming uses.</summary>
    public static bool IsMemoryLoadHigh() => SemiLocalPool<T>.IsMemoryLoadHigh();

    /// <summary>A handle on one thread's stack, kept by the caller to skip the slot lookup.</summary>
    /// <remarks>Read on the owner thread only (its count is written by the owner).</remarks>
    internal readonly struct ThreadStack(SemiLocalPool<T>.Local? local)
    {
        /// <summary>True when the thread had no stack when the handle was taken.</summary>
        public bool IsNone => local is null;

        /// <summary>False only when the stack is surely empty.</summary>
        public bool MayHoldItems => local is { Count: > 0 };
    }
}
