using Manaloc.AspNetCore;
using Manaloc.AspNetCore.ObjectPools;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.ObjectPool;

namespace Manaloc.AspNetCore.Tests.ObjectPools;

/// <summary>Microsoft.Extensions.ObjectPool's own behaviours, held by Manaloc's provider.</summary>
public sealed class ManalocObjectPoolProviderTests
{
    [Fact]
    public void Returned_object_is_reused_and_the_pool_is_manalocs()
    {
        var pool = new ManalocObjectPoolProvider().Create(new DefaultPooledObjectPolicy<Plain>());
        Assert.IsType<SemiLocalObjectPool<Plain>>(pool);
        var item = pool.Get();
        pool.Return(item);
        Assert.Same(item, pool.Get());
    }

    [Fact]
    public void A_policy_refusing_a_return_drops_the_object_and_disposes_it()
    {
        var policy = new RefusingPolicy();
        var pool = new ManalocObjectPoolProvider().Create(policy);
        var item = pool.Get();
        pool.Return(item);
        Assert.Equal(1, policy.Returns);
        Assert.True(item.Disposed);
        Assert.NotSame(item, pool.Get());
    }

    [Fact]
    public void Resettable_objects_are_reset_on_return_and_dropped_when_the_reset_fails()
    {
        var pool = new ManalocObjectPoolProvider().Create(new DefaultPooledObjectPolicy<Resettable>());
        var item = pool.Get();
        item.Value = 5;
        pool.Return(item);
        Assert.Equal(1, item.Resets);
        Assert.Equal(0, item.Value);
        Assert.Same(item, pool.Get());

        item.RefuseReset = true;
        pool.Return(item);
        Assert.NotSame(item, pool.Get());
    }

    [Fact]
    public void Disposing_the_pool_disposes_the_idle_disposable_objects()
    {
        var pool = new ManalocObjectPoolProvider().Create(new DefaultPooledObjectPolicy<DisposableItem>());
        var idle = pool.Get();
        var busy = pool.Get();
        pool.Return(idle);
        ((IDisposable)pool).Dispose();
        Assert.True(idle.Disposed);
        Assert.False(busy.Disposed);
    }

    [Fact]
    public void After_disposal_get_throws_and_return_disposes_the_object()
    {
        var pool = new ManalocObjectPoolProvider().Create(new DefaultPooledObjectPolicy<DisposableItem>());
        var busy = pool.Get();
        ((IDisposable)pool).Dispose();
        pool.Return(busy);
        Assert.True(busy.Disposed);
        var e = Assert.Throws<ObjectDisposedException>(() => pool.Get());
        Assert.Contains(nameof(DisposableItem), e.Message);
    }

    [Fact]
    public void A_second_return_of_an_idle_object_throws_instead_of_handing_it_out_twice()
    {
        var pool = new ManalocObjectPoolProvider().Create(new DefaultPooledObjectPolicy<Plain>());
        var item = pool.Get();
        pool.Return(item);
        Assert.Throws<InvalidOperationException>(() => pool.Return(item));
        Assert.Same(item, pool.Get());
        Assert.NotSame(item, pool.Get());
    }

    [Fact]
    public void Maximum_retained_caps_the_idle_objects()
    {
        var pool = (SemiLocalObjectPool<Plain>)new ManalocObjectPoolProvider(new ManalocObjectPoolOptions { MaximumRetained = 2, LocalCapacity = 4, BatchSize = 2 })
            .Create(new DefaultPooledObjectPolicy<Plain>());
        var items = Enumerable.Range(0, 10).Select(_ => pool.Get()).ToList();
        foreach (var item in items) pool.Return(item);
        Assert.True(pool.Inner.GetStatistics().Retained <= 2, pool.Inner.GetStatistics().ToString());
    }

    [Fact]
    public void A_policy_creating_null_is_named_in_the_error()
    {
        var pool = new ManalocObjectPoolProvider().Create(new NullPolicy());
        var e = Assert.Throws<InvalidOperationException>(() => pool.Get());
        Assert.Contains(nameof(NullPolicy), e.Message);
    }

    [Fact]
    public void Bad_options_are_refused_naming_the_key()
    {
        var e = Assert.Throws<ArgumentException>(() => new ManalocObjectPoolProvider(new ManalocObjectPoolOptions { BatchSize = 100 }));
        Assert.Contains("Manaloc:ObjectPools:BatchSize", e.Message);
    }

    [Fact]
    public void Registration_makes_the_provider_and_the_injected_pools_manalocs_and_the_container_owns_them()
    {
        var services = new ServiceCollection();
        services.AddSingleton<ObjectPoolProvider, DefaultObjectPoolProvider>(); // registered before: replaced
        services.AddManalocObjectPools(o => o.LocalCapacity = 32);
        services.TryAddDefaultProvider(); // a framework's TryAdd after: no effect
        DisposableItem idle;
        using (var provider = services.BuildServiceProvider(validateScopes: true))
        {
            Assert.IsType<ManalocObjectPoolProvider>(provider.GetRequiredService<ObjectPoolProvider>());
            var pool = provider.GetRequiredService<ObjectPool<DisposableItem>>();
            Assert.Same(pool, provider.GetRequiredService<ObjectPool<DisposableItem>>());
            var inner = Assert.IsType<DependencyObjectPool<DisposableItem>>(pool).Inner;
            Assert.IsType<SemiLocalObjectPool<DisposableItem>>(inner);
            idle = pool.Get();
            pool.Return(idle);
            Assert.False(idle.Disposed);
        }
        Assert.True(idle.Disposed); // the container disposed the pool, which disposed its idle objects
    }

    public sealed class Plain;

    public sealed class DisposableItem : IDisposable
    {
        public bool Disposed { get; private set; }
        public void Dispose() => Disposed = true;
    }

    public sealed class Resettable : IResettable
    {
        public int Value { get; set; }
        public int Resets { get; private set; }
        public bool RefuseReset { get; set; }

        public bool TryReset()
        {
            Resets++;
            Value = 0;
            return !RefuseReset;
        }
    }

    private sealed class RefusingPolicy : PooledObjectPolicy<DisposableItem>
    {
        public int Returns { get; private set; }
        public override DisposableItem Create() => new();
        public override bool Return(DisposableItem obj)
        {
            Returns++;
            return false;
        }
    }

    private sealed class NullPolicy : PooledObjectPolicy<Plain>
    {
        public override Plain Create() => null!;
        public override bool Return(Plain obj) => true;
    }
}

internal static class ServiceCollectionTestExtensions
{
    /// <summary>What ASP.NET Core's own registrations do (AddRouting, AddMvc): TryAdd the default provider.</summary>
    public static void TryAddDefaultProvider(this IServiceCollection services)
        => Microsoft.Extensions.DependencyInjection.Extensions.ServiceCollectionDescriptorExtensions.TryAddSingleton<ObjectPoolProvider, DefaultObjectPoolProvider>(services);
}
