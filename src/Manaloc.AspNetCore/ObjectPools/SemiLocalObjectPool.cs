using Manaloc.Pooling;
using Microsoft.Extensions.ObjectPool;

namespace Manaloc.AspNetCore.ObjectPools;

/// <summary>A <see cref="SemiLocalPool{T}"/> seen as an <see cref="ObjectPool{T}"/>; its policy is the caller's <see cref="IPooledObjectPolicy{T}"/>.</summary>
/// <remarks>Disposal, drops and return-after-dispose are the semi-local pool's own (see <see cref="ManalocObjectPoolProvider"/>).</remarks>
internal sealed class SemiLocalObjectPool<T> : ObjectPool<T>, IDisposable where T : class
{
    private readonly SemiLocalPool<T> _pool;

    public SemiLocalObjectPool(IPooledObjectPolicy<T> policy, PoolOptions options)
    {
        _pool = new SemiLocalPool<T>(new Policy(policy), options);
    }

    /// <summary>The pool underneath (tests and statistics).</summary>
    public SemiLocalPool<T> Inner => _pool;

    public override T Get() => _pool.Rent();

    public override void Return(T obj) => _pool.Return(obj);

    public void Dispose() => _pool.Dispose();

    public override string ToString() => _pool.ToString();

    /// <summary>The caller's policy as a Manaloc policy: it creates, and it decides every return (so the pool always asks it).</summary>
    private sealed class Policy(IPooledObjectPolicy<T> policy) : PoolPolicy<T>
    {
        public override T Create()
            => policy.Create() ?? throw new InvalidOperationException($"The pooled object policy {policy.GetType().Name} created null for the pool of {typeof(T).Name}.");

        public override bool Return(T item) => policy.Return(item);
    }
}
