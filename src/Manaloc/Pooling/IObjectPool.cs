namespace Manaloc.Pooling;

/// <summary>
/// A pool of reusable objects: <see cref="Rent"/> hands one out (created by the pool's
/// <see cref="PoolPolicy{T}"/> when none is idle), <see cref="Return"/> gives it back for reuse.
/// </summary>
/// <typeparam name="T">The pooled type.</typeparam>
/// <remarks>
/// <para>Why: creating some objects is costly, or allocating them at a high rate costs GC time; a pool
/// trades retained memory for fewer creations. For small, cheap objects the runtime's allocator is
/// usually faster than any pool: measure first (the lab's <c>pool-scaling</c> experiment).</para>
/// <para>Contract for every implementation: returning <see langword="null"/> throws
/// <see cref="ArgumentNullException"/>; a policy whose <c>Create</c> throws lets the exception reach
/// the caller and leaves the pool consistent; an object returned after <see cref="IDisposable.Dispose"/>
/// is dropped (disposed if it is <see cref="IDisposable"/>), never kept; renting after Dispose throws
/// <see cref="ObjectDisposedException"/>. A returned object must not be used by the caller any more.
/// A second return of an object the pool still holds where the returning thread's check looks (the
/// top of its stack: see each pool's <c>Return</c>) throws <see cref="InvalidOperationException"/>
/// and changes nothing, so <c>Return(x); Return(x);</c> never hands <c>x</c> to two renters. In debug
/// mode (<see cref="PoolOptions.DebugMode"/>) every double return and the return of an object the
/// pool never handed out throw; each raises the <c>Manaloc</c> event source's DoubleReturn /
/// ForeignReturn event.</para>
/// <para>Thread safety: all members are safe to call from any thread, concurrently; an object may be
/// returned on a thread other than the one that rented it.</para>
/// </remarks>
public interface IObjectPool<T> : IDisposable where T : class
{
    /// <summary>The pool's name: the <c>pool</c> tag of its metrics and the name in its events.</summary>
    string Name { get; }

    /// <summary>Hands out an idle object, or a new one from the policy when none is idle.</summary>
    /// <exception cref="ObjectDisposedException">The pool was disposed.</exception>
    T Rent();

    /// <summary>Gives <paramref name="item"/> back for reuse (or drops it when the pool is full or disposed).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="item"/> is null.</exception>
    /// <exception cref="InvalidOperationException">A double return the pool's check sees (always <c>Return(x); Return(x);</c>
    /// on one thread with nothing returned in between); in debug mode, any double or foreign return.</exception>
    void Return(T item);

    /// <summary>Drops every idle object the pool can reach now (per-thread stacks as soon as their thread next uses the pool).</summary>
    void Trim();

    /// <summary>A snapshot of the pool's counters; the figures of a busy pool are approximate (read without stopping it).</summary>
    PoolStatistics GetStatistics();
}
