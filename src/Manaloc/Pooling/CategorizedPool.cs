using System.Collections.Concurrent;

namespace Manaloc.Pooling;

/// <summary>
/// One <see cref="SemiLocalPool{T}"/> per named code section (category affinity):
/// threads that run the same section share a shared tier, whichever threads they are.
/// </summary>
/// <typeparam name="T">The pooled type.</typeparam>
/// <remarks>
/// <para>Why: a semi-local pool relies on thread affinity; when any thread may run any section, each
/// thread's stack ends up holding objects of every section. Keying the shared tier by section keeps
/// objects near the code that uses them. Categories are created on first use with the same policy
/// and options; each is its own pool (metrics tag <c>{name}/{category}</c>), so use few, fixed names.
/// Hold the result of <see cref="Category"/> on hot paths: <see cref="Rent(string)"/> looks the
/// category up each call.</para>
/// <para>Thread safety: every member is safe from any thread; a category is created exactly once.</para>
/// </remarks>
public sealed class CategorizedPool<T> : IDisposable where T : class
{
    private readonly ConcurrentDictionary<string, SemiLocalPool<T>> _categories = new(StringComparer.Ordinal);
    private readonly Lock _createLock = new();
    private readonly PoolPolicy<T> _policy;
    private readonly PoolOptions _options;
    private bool _disposed;

    /// <summary>Creates a pool whose objects come from <paramref name="factory"/> (nothing is reset on return), with default options.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="factory"/> is null.</exception>
    public CategorizedPool(Func<T> factory)
        : this(factory, options: null)
    {
    }

    /// <summary>Creates a pool with <paramref name="policy"/> and default options.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="policy"/> is null.</exception>
    public CategorizedPool(PoolPolicy<T> policy)
        : this(policy, options: null)
    {
    }

    /// <summary>Creates a pool whose objects come from <paramref name="factory"/> (nothing is reset on return), with <paramref name="options"/> (defaults when null).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="factory"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of range.</exception>
    public CategorizedPool(Func<T> factory, PoolOptions? options)
        : this(PoolPolicies.Create(factory ?? throw new ArgumentNullException(nameof(factory))), options)
    {
    }

    /// <summary>Creates a categorized pool; each category gets a <see cref="SemiLocalPool{T}"/> with these options.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="policy"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of range.</exception>
    public CategorizedPool(PoolPolicy<T> policy, PoolOptions? options)
    {
        ArgumentNullException.ThrowIfNull(policy);
        options ??= new PoolOptions();
        options.Validate();
        _policy = policy;
        _options = options;
        Name = options.Name ?? typeof(T).Name;
    }

    /// <summary>The pool's name; categories are named <c>{Name}/{category}</c>.</summary>
    public string Name { get; }

    // "CategorizedPool<Order>": the kind in messages and ToString.
    private static readonly string s_kind = PoolText.Kind("CategorizedPool", typeof(T));

    /// <summary>The pool's kind, name, categories and idle objects: <c>CategorizedPool&lt;Order&gt; 'orders' (2 categories, 12 retained)</c>, or <c>(disposed)</c>.</summary>
    /// <remarks>Thread safety: safe from any thread.</remarks>
    public override string ToString()
        => PoolText.Describe(s_kind, Name, Volatile.Read(ref _disposed), GetStatistics().Retained, _categories.Count == 1 ? "category" : "categories", _categories.Count);

    /// <summary>Names of the categories created so far.</summary>
    public IReadOnlyCollection<string> Categories => _categories.Keys.ToArray();

    /// <summary>The pool of <paramref name="category"/>, created on first use.</summary>
    /// <exception cref="ArgumentException"><paramref name="category"/> is null or empty.</exception>
    /// <exception cref="ObjectDisposedException">The pool was disposed.</exception>
    public SemiLocalPool<T> Category(string category)
    {
        if (_categories.TryGetValue(category ?? "", out var pool)) return pool;
        return CreateCategory(category!, forReturn: false)!;
    }

    /// <summary>Creates the category's pool; once disposed, throws, or answers null when <paramref name="forReturn"/>.</summary>
    private SemiLocalPool<T>? CreateCategory(string category, bool forReturn)
    {
        ArgumentException.ThrowIfNullOrEmpty(category);
        lock (_createLock)
        {
            if (_disposed)
            {
                if (forReturn) return null; // a return racing Dispose: the caller drops its object
                ThrowHelper.ThrowPoolDisposed(s_kind, Name);
            }
            if (_categories.TryGetValue(category, out var existing)) return existing;
            var options = new PoolOptions
            {
                Name = $"{Name}/{category}",
                BatchSize = _options.BatchSize,
                LocalCapacity = _options.LocalCapacity,
                MaxRetained = _options.MaxRetained,
                DebugMode = _options.DebugMode,
                TrimAfterGen2 = _options.TrimAfterGen2,
                ReleaseIdleAfter = _options.ReleaseIdleAfter, // each category releases on its own demand
                TimeProvider = _options.TimeProvider,
            };
            var pool = new SemiLocalPool<T>(_policy, options);
            _categories[category] = pool;
            return pool;
        }
    }

    /// <summary>Rents from <paramref name="category"/>'s pool.</summary>
    public T Rent(string category) => Category(category).Rent();

    /// <summary>Returns <paramref name="item"/> to <paramref name="category"/>'s pool.</summary>
    /// <exception cref="InvalidOperationException"><paramref name="item"/> is already idle on this thread's stack of that category (a double return: see <see cref="SemiLocalPool{T}.Return"/>).</exception>
    /// <remarks>A double return is refused as by <see cref="SemiLocalPool{T}.Return"/>, within the category (an object returned to two categories is not caught outside debug mode). After Dispose (or racing with it), an object returned to a category that never existed is dropped like any other.</remarks>
    public void Return(string category, T item)
    {
        if (!_categories.TryGetValue(category ?? "", out var pool))
        {
            pool = Volatile.Read(ref _disposed) ? null : CreateCategory(category!, forReturn: true);
            if (pool is null)
            {
                ArgumentNullException.ThrowIfNull(item);
                PoolDrop.Drop(item);
                return;
            }
        }
        pool.Return(item);
    }

    /// <summary>Trims every category.</summary>
    public void Trim()
    {
        foreach (var pool in _categories.Values) pool.Trim();
    }

    /// <summary>The counters of every category added up.</summary>
    public PoolStatistics GetStatistics()
    {
        var total = default(PoolStatistics);
        foreach (var pool in _categories.Values) total += pool.GetStatistics();
        return total;
    }

    /// <summary>Disposes every category; later rents throw, later returns are dropped.</summary>
    /// <remarks>Idempotent. Thread safety: safe from any thread.</remarks>
    public void Dispose()
    {
        lock (_createLock)
        {
            if (_disposed) return;
            _disposed = true;
        }
        foreach (var pool in _categories.Values) pool.Dispose();
    }
}
