using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Manaloc.Pooling;

/// <summary>
/// A pool of one stack under one lock, refilled in batches of
/// <see cref="PoolOptions.BatchSize"/> new objects when it runs empty.
/// </summary>
/// <typeparam name="T">The pooled type.</typeparam>
/// <remarks>
/// <para>Why: the simplest correct pool, and the right one when few threads rent at a low rate, or
/// when retained memory must be exact and small. Every rent and return takes the lock, so under
/// contention it serialises threads (the lab's <c>pool-scaling</c> experiment shows how much);
/// <see cref="SemiLocalPool{T}"/> avoids that. Objects are created
/// outside the lock, so a slow or throwing factory never blocks or corrupts the pool.</para>
/// <para>Double return: a return of the object stored last (still idle on top of the stack) throws
/// <see cref="InvalidOperationException"/> and changes nothing (see <see cref="Return"/>).</para>
/// <para>Memory ordering: every field but <c>_disposed</c> is guarded by <c>_lock</c>; <c>_disposed</c>
/// is set once under the lock and read under it. Thread safety: every member is safe from any thread.</para>
/// </remarks>
public sealed class LockedPool<T> : IObjectPool<T>, IPoolStatisticsSource where T : class
{
    private readonly Lock _lock = new();
    private readonly PoolPolicy<T> _policy;
    private readonly int _batch;
    private readonly int _maxRetained;
    private readonly PoolDebugTracker<T>? _debug;
    private readonly bool _resets;
    // False only for the lab's and benchmarks' measurement of what the duplicate scan costs.
    private readonly bool _scan;
    private T?[] _items;
    private int _count;
    private bool _disposed;
    private long _rents, _creations, _drops, _trimmed;

    /// <summary>Creates a pool whose objects come from <paramref name="factory"/> (nothing is reset on return), with default options.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="factory"/> is null.</exception>
    public LockedPool(Func<T> factory)
        : this(factory, options: null)
    {
    }

    /// <summary>Creates a pool with <paramref name="policy"/> and default options.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="policy"/> is null.</exception>
    public LockedPool(PoolPolicy<T> policy)
        : this(policy, options: null)
    {
    }

    /// <summary>Creates a pool whose objects come from <paramref name="factory"/> (nothing is reset on return), with <paramref name="options"/> (defaults when null).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="factory"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of range.</exception>
    public LockedPool(Func<T> factory, PoolOptions? options)
        : this(PoolPolicies.Create(factory ?? throw new ArgumentNullException(nameof(factory))), options)
    {
    }

    /// <summary>Creates a pool with <paramref name="policy"/> and <paramref name="options"/> (defaults when null).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="policy"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of range.</exception>
    public LockedPool(PoolPolicy<T> policy, PoolOptions? options)
        : this(policy, options, DuplicateReturns.Throw)
    {
    }

    internal LockedPool(PoolPolicy<T> policy, PoolOptions? options, DuplicateReturns duplicates)
    {
        ArgumentNullException.ThrowIfNull(policy);
        options ??= new PoolOptions();
        options.Validate();
        _policy = policy;
        Name = options.Name ?? typeof(T).Name;
        _batch = options.BatchSize;
        _maxRetained = options.ResolveMaxRetained();
        _debug = options.DebugMode ? new PoolDebugTracker<T>(Name, $"{s_kind} '{Name}'") : null;
        _resets = policy.ResetsObjects;
        _scan = duplicates != DuplicateReturns.Unchecked;
        _items = new T?[Math.Min(_maxRetained, Math.Max(16, _batch * 2))];
        PoolMetrics.Register(this);
    }

    /// <inheritdoc/>
    public string Name { get; }

    // "LockedPool<Order>": the kind in messages and ToString.
    private static readonly string s_kind = PoolText.Kind("LockedPool", typeof(T));

    /// <summary>The pool's kind, name and idle objects: <c>LockedPool&lt;Order&gt; 'orders' (12 retained)</c>, or <c>(disposed)</c>.</summary>
    /// <remarks>Thread safety: safe from any thread (takes the lock).</remarks>
    public override string ToString()
    {
        lock (_lock) return PoolText.Describe(s_kind, Name, _disposed, _count);
    }

    string IPoolStatisticsSource.Kind => "object";

    /// <inheritdoc/>
    public T Rent()
    {
        lock (_lock)
        {
            if (_disposed) ThrowHelper.ThrowPoolDisposed(s_kind, Name);
            if (_count > 0)
            {
                T item = _items[--_count]!;
                _items[_count] = null;
                _rents++;
                _debug?.OnRent(item);
                return item;
            }
        }
        return RentAndRefill();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private T RentAndRefill()
    {
        // Create the batch outside the lock. A throwing factory: the extras already stored stay in the
        // pool, the first object (the renter's) is dropped, and the renter gets the exception.
        T first = _policy.Create();
        Interlocked.Increment(ref _creations); // counter only; read under the lock or racily for statistics
        try
        {
            for (int i = 1; i < _batch; i++)
            {
                T extra = _policy.Create();
                Interlocked.Increment(ref _creations); // counter only
                if (!Store(extra, countDrop: false, scan: false)) // a new object: the pool cannot hold it yet
                {
                    PoolDrop.Drop(extra);
                    break;
                }
            }
        }
        catch
        {
            PoolDrop.Drop(first); // the renter gets the exception, not the object
            throw;
        }
        lock (_lock)
        {
            _rents++;
        }
        _debug?.OnRent(first);
        return first;
    }

    /// <inheritdoc/>
    /// <exception cref="InvalidOperationException"><paramref name="item"/> is the object stored last and still
    /// idle (a double return: see the remarks); in debug mode, any double or foreign return.</exception>
    /// <remarks>
    /// Double return. Under the lock, before storing, the return compares the object with the top of the
    /// stack: the object stored last and not rented since, by any thread. If it is that object, the
    /// return throws and changes nothing (the object is kept once, no drop is counted, the policy does
    /// not see the second return). So <c>Return(x); Return(x);</c> is caught whenever no other object
    /// was stored in between, which on one thread means always, unless another thread returned an
    /// object between the two calls. Any other double return (after other returns, after a trim dropped
    /// the object, or made on another thread) is caught only in debug mode
    /// (<see cref="PoolOptions.DebugMode"/>). One compare, because every compare here is made under the
    /// lock that serialises the pool, where a deeper scan would cost every thread. With a policy that resets objects, the compare
    /// runs under the lock before the reset (a second reset of an idle object must not happen) and again
    /// when storing.
    /// </remarks>
    public void Return(T item)
    {
        if (item is null) ThrowHelper.ThrowArgumentNull(nameof(item));
        _debug?.OnReturn(item);
        if (_resets)
        {
            if (_scan)
            {
                lock (_lock) ThrowIfHeld(item);
            }
            if (!_policy.Return(item))
            {
                lock (_lock) _drops++;
                PoolDrop.Drop(item);
                return;
            }
        }
        if (!Store(item, countDrop: true, scan: _scan))
        {
            PoolDrop.Drop(item);
        }
    }

    /// <summary>Under the lock: throws when <paramref name="item"/> is the object stored last (the top of the stack).</summary>
    /// <remarks>One compare: a deeper scan would run under the lock, so every thread would pay for it.</remarks>
    private void ThrowIfHeld(T item)
    {
        int top = _count - 1;
        if ((uint)top < (uint)_items.Length && ReferenceEquals(_items[top], item)) RefuseDuplicate(item);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void RefuseDuplicate(T item)
    {
        Diagnostics.ManalocEventSource.Log.DoubleReturn(Name, item.GetType().Name);
        ThrowHelper.ThrowDoubleReturn($"{s_kind} '{Name}'", PoolText.TypeName(item.GetType()));
    }

    private bool Store(T item, bool countDrop, bool scan)
    {
        lock (_lock)
        {
            if (scan) ThrowIfHeld(item); // first: a throw leaves the pool as it was
            if (_disposed || _count >= _maxRetained)
            {
                if (countDrop) _drops++;
                return false;
            }
            if (_count == _items.Length) Array.Resize(ref _items, Math.Min(_maxRetained, _items.Length * 2));
            _items[_count++] = item;
            Debug.Assert(_count <= _maxRetained, "retained never exceeds the cap");
            return true;
        }
    }

    /// <inheritdoc/>
    public void Trim()
    {
        T?[] dropped;
        lock (_lock)
        {
            dropped = _items[.._count];
            Array.Clear(_items, 0, _count);
            _trimmed += _count;
            _count = 0;
        }
        if (dropped.Length > 0) Diagnostics.ManalocEventSource.Log.PoolTrimmed(Name, dropped.Length, "requested");
        PoolDrop.DropAll(dropped); // drops every object; then rethrows the failure (AggregateException for several)
    }

    /// <inheritdoc/>
    public PoolStatistics GetStatistics()
    {
        lock (_lock)
        {
            return new PoolStatistics { Rents = _rents, Creations = Interlocked.Read(ref _creations), Drops = _drops, Trimmed = _trimmed, Retained = _count };
        }
    }

    /// <summary>Stops the pool: idle objects are dropped, later returns dropped, later rents throw.</summary>
    /// <remarks>Idempotent. If objects' Dispose methods throw, every other object is still dropped and the
    /// pool is still disposed; then the exception is rethrown (an <see cref="AggregateException"/> when
    /// several failed). Thread safety: safe from any thread.</remarks>
    public void Dispose()
    {
        T?[] dropped;
        lock (_lock)
        {
            if (_disposed) return;
            _disposed = true;
            dropped = _items[.._count];
            Array.Clear(_items, 0, _count);
            _drops += _count;
            _count = 0;
        }
        try
        {
            PoolDrop.DropAll(dropped); // drops every object; then rethrows the failure (AggregateException for several)
        }
        finally
        {
            PoolMetrics.Unregister(this);
        }
    }
}
