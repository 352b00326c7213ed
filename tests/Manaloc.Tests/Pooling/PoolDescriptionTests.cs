using Manaloc.Buffers;
using Manaloc.Pooling;

namespace Manaloc.Tests.Pooling;

/// <summary>Pools and buffer managers name their kind and Name in ToString and in ObjectDisposedException.</summary>
public sealed class PoolDescriptionTests
{
    private static PoolOptions Named(string name) => new() { Name = name, TrimAfterGen2 = false };

    [Fact]
    public void SemiLocalPool_shows_kind_name_and_retained_then_disposed()
    {
        var pool = new SemiLocalPool<PooledThing>(PoolPolicies.New<PooledThing>(), Named("orders"));
        var things = Enumerable.Range(0, 12).Select(_ => pool.Rent()).ToArray();
        foreach (var t in things) pool.Return(t);
        Assert.Equal("SemiLocalPool<PooledThing> 'orders' (12 retained)", pool.ToString());
        pool.Dispose();
        Assert.Equal("SemiLocalPool<PooledThing> 'orders' (disposed)", pool.ToString());
        var e = Assert.Throws<ObjectDisposedException>(() => pool.Rent());
        Assert.Contains("SemiLocalPool<PooledThing> 'orders' was disposed", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void LockedPool_shows_kind_name_and_retained_then_disposed()
    {
        var pool = new LockedPool<List<int>>(PoolPolicies.New<List<int>>(), new PoolOptions { Name = "lists", BatchSize = 1 });
        pool.Return(pool.Rent());
        Assert.Equal("LockedPool<List<Int32>> 'lists' (1 retained)", pool.ToString());
        pool.Dispose();
        Assert.Equal("LockedPool<List<Int32>> 'lists' (disposed)", pool.ToString());
        var e = Assert.Throws<ObjectDisposedException>(() => pool.Rent());
        Assert.Contains("LockedPool<List<Int32>> 'lists' was disposed", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void CategorizedPool_shows_categories_and_retained_then_disposed()
    {
        var pool = new CategorizedPool<PooledThing>(PoolPolicies.New<PooledThing>(), Named("sections"));
        pool.Return("network", pool.Rent("network"));
        pool.Return("algorithm", pool.Rent("algorithm"));
        Assert.Equal("CategorizedPool<PooledThing> 'sections' (2 categories, 2 retained)", pool.ToString());
        pool.Dispose();
        Assert.Equal("CategorizedPool<PooledThing> 'sections' (disposed)", pool.ToString());
        var e = Assert.Throws<ObjectDisposedException>(() => pool.Rent("io"));
        Assert.Contains("CategorizedPool<PooledThing> 'sections' was disposed", e.Message, StringComparison.Ordinal);
        var category = Assert.Throws<ObjectDisposedException>(() => pool.Rent("network")); // the category's own pool
        Assert.Contains("SemiLocalPool<PooledThing> 'sections/network' was disposed", category.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void BufferManager_shows_name_and_retained_then_disposed()
    {
        var manager = new BufferManager(new BufferManagerOptions { Name = "wire", TrimAfterGen2 = false });
        manager.Return(manager.Rent(100));
        Assert.Equal("BufferManager 'wire' (1 retained)", manager.ToString());
        manager.Dispose();
        Assert.Equal("BufferManager 'wire' (disposed)", manager.ToString());
        var e = Assert.Throws<ObjectDisposedException>(() => manager.Rent(100));
        Assert.Contains("BufferManager 'wire' was disposed", e.Message, StringComparison.Ordinal);
        Assert.Equal(nameof(BufferManager), e.ObjectName);
    }
}
