using Microsoft.Extensions.ObjectPool;

namespace Manaloc.AspNetCore.ObjectPools;

/// <summary>
/// The <see cref="ObjectPool{T}"/> resolved from dependency injection: a pool from the registered
/// <see cref="ObjectPoolProvider"/> with <see cref="DefaultPooledObjectPolicy{T}"/> (a new object on an
/// empty pool; <see cref="IResettable.TryReset"/> on return). The container owns it: disposing the
/// container disposes the pool and the idle objects.
/// </summary>
internal sealed class DependencyObjectPool<T> : ObjectPool<T>, IDisposable where T : class, new()
{
    private readonly ObjectPool<T> _pool;

    public DependencyObjectPool(ObjectPoolProvider provider)
    {
        _pool = provider.Create<T>();
    }

    /// <summary>The provider's pool (tests).</summary>
    public ObjectPool<T> Inner => _pool;

    public override T Get() => _pool.Get();

    public override void Return(T obj) => _pool.Return(obj);

    public void Dispose() => (_pool as IDisposable)?.Dispose();
}
