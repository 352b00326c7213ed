using Manaloc.Pooling;

namespace Manaloc.Tests.Pooling;

/// <summary>One category ("section") of a <see cref="CategorizedPool{T}"/> as an <see cref="IObjectPool{T}"/>, so the
/// contract test classes run against it; disposing the adapter disposes the whole categorized pool.</summary>
internal sealed class CategoryAdapter(CategorizedPool<PooledThing> pool) : IObjectPool<PooledThing>
{
    public string Name => pool.Name;
    public PooledThing Rent() => pool.Rent("section");
    public void Return(PooledThing item) => pool.Return("section", item);
    public void Trim() => pool.Trim();
    public PoolStatistics GetStatistics() => pool.GetStatistics();
    public void Dispose() => pool.Dispose();
}
