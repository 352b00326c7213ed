using Manaloc.Pooling;

namespace Manaloc.Tests.Pooling;

/// <summary>The contract every pool keeps; one subclass per implementation.</summary>
public abstract class ObjectPoolContractTests
{
    protected abstract IObjectPool<PooledThing> CreatePool(PoolPolicy<PooledThing> policy, PoolOptions options);

    private IObjectPool<PooledThing> Create(PoolOptions? options = null, PoolPolicy<PooledThing>? policy = null)
        => CreatePool(policy ?? PoolPolicies.New<PooledThing>(), options ?? new PoolOptions { Name = "contract-" + Guid.NewGuid().ToString("N")[..8] });

    [Fact]
    public void A_returned_object_is_handed_out_again()
    {
        using var pool = Create();
        var first = pool.Rent();
        pool.Return(first);
        Assert.Same(first, pool.Rent());
    }

    [Fact]
    public void Returning_null_throws_ArgumentNullException()
    {
        using var pool = Create();
        Assert.Throws<ArgumentNullException>(() => pool.Return(null!));
    }

    [Fact]
    public void A_throwing_factory_reaches_the_caller_and_the_pool_stays_usable()
    {
        bool fail = true;
        using var pool = Create(policy: PoolPolicies.Create(() => fail ? throw new FormatException("factory") : new PooledThing()));
        Assert.Throws<FormatException>(() => pool.Rent());
        fail = false;
        var thing = pool.Rent();
        pool.Return(thing);
        Assert.Same(thing, pool.Rent());
        var stats = pool.GetStatistics();
        Assert.Equal(stats.Creations - 1, stats.Retained); // every object made is idle but the one rented: the failure lost nothing
    }

    [Fact]
    public void A_return_after_Dispose_is_dropped_and_disposed()
    {
        var pool = Create();
        var thing = pool.Rent();
        pool.Dispose();
        pool.Return(thing);
        Assert.True(thing.Disposed);
        Assert.Equal(0, pool.GetStatistics().Retained);
        Assert.Throws<ObjectDisposedException>(() => pool.Rent());
        pool.Dispose(); // idempotent
    }

    [Fact]
    public void Dispose_drops_and_disposes_idle_objects()
    {
        var pool = Create();
        var things = Enumerable.Range(0, 40).Select(_ => pool.Rent()).ToArray();
        foreach (var t in things) pool.Return(t);
        pool.Dispose();
        Assert.All(things, t => Assert.True(t.Disposed));
        Assert.Equal(0, pool.GetStatistics().Retained);
    }

    [Fact]
    public void An_object_the_policy_rejects_is_dropped()
    {
        using var pool = Create(policy: PoolPolicies.Create(() => new PooledThing(), t => t.Id % 2 == 0));
        var things = Enumerable.Range(0, 8).Select(_ => pool.Rent()).ToArray();
        foreach (var t in things) pool.Return(t);
        var again = Enumerable.Range(0, 8).Select(_ => pool.Rent()).ToArray();
        Assert.DoesNotContain(again, t => t.Id % 2 == 1 && things.Contains(t));
        Assert.True(pool.GetStatistics().Drops >= things.Count(t => t.Id % 2 == 1));
    }

    [Fact]
    public void Statistics_count_rents_and_creations()
    {
        using var pool = Create(new PoolOptions { BatchSize = 1, LocalCapacity = 4 });
        var a = pool.Rent();
        var b = pool.Rent();
        pool.Return(a);
        pool.Return(b);
        pool.Rent();
        var stats = pool.GetStatistics();
        Assert.Equal(3, stats.Rents);
        Assert.Equal(2, stats.Creations);
        Assert.Equal(1, stats.Retained);
    }

    [Fact]
    public void Retained_never_exceeds_the_cap()
    {
        using var pool = Create(new PoolOptions { BatchSize = 2, LocalCapacity = 4, MaxRetained = 6 });
        var things = Enumerable.Range(0, 50).Select(_ => pool.Rent()).ToArray();
        foreach (var t in things) pool.Return(t);
        var stats = pool.GetStatistics();
        Assert.InRange(stats.Retained, 1, 6);
        Assert.True(stats.Drops >= 44 - 0);
    }

    [Fact]
    public void Trim_drops_the_callers_idle_objects()
    {
        using var pool = Create();
        var things = Enumerable.Range(0, 10).Select(_ => pool.Rent()).ToArray();
        foreach (var t in things) pool.Return(t);
        pool.Trim();
        Assert.Equal(0, pool.GetStatistics().Retained);
        Assert.All(things, t => Assert.True(t.Disposed));
    }

    [Fact]
    public void Debug_mode_detects_a_double_return()
    {
        using var pool = Create(new PoolOptions { DebugMode = true });
        var thing = pool.Rent();
        pool.Return(thing);
        var e = Assert.Throws<InvalidOperationException>(() => pool.Return(thing));
        Assert.Contains("Double return", e.Message, StringComparison.Ordinal);
        Assert.Same(thing, pool.Rent());
        Assert.NotSame(thing, pool.Rent()); // kept once, not twice
    }

    [Fact]
    public void Debug_mode_detects_a_foreign_return()
    {
        using var pool = Create(new PoolOptions { DebugMode = true });
        var e = Assert.Throws<InvalidOperationException>(() => pool.Return(new PooledThing()));
        Assert.Contains("Foreign return", e.Message, StringComparison.Ordinal);
        Assert.Equal(0, pool.GetStatistics().Retained);
    }

    [Fact]
    public void Steady_state_rent_and_return_allocate_nothing()
    {
        using var pool = Create();
        for (int i = 0; i < 1000; i++) pool.Return(pool.Rent());
        Assert.Equal(0, Allocations.OnThisThread(() => { for (int i = 0; i < 10_000; i++) pool.Return(pool.Rent()); }));
    }

    [Fact]
    public void Concurrent_renters_never_share_an_object()
    {
        using var pool = Create(new PoolOptions { BatchSize = 4, LocalCapacity = 8, MaxRetained = 64 });
        Watchdog.Run(4, (index, progress) =>
        {
            var held = new List<PooledThing>();
            var random = new Random(index);
            for (int i = 0; i < 40_000; i++)
            {
                if (held.Count < 16 && (held.Count == 0 || random.Next(2) == 0))
                {
                    var t = pool.Rent();
                    Assert.Equal(0, Interlocked.Exchange(ref t.Out, 1)); // handed to two renters at once?
                    held.Add(t);
                }
                else
                {
                    var t = held[^1];
                    held.RemoveAt(held.Count - 1);
                    Assert.Equal(1, Interlocked.Exchange(ref t.Out, 0));
                    pool.Return(t);
                }
                if ((i & 1023) == 0) progress();
            }
            foreach (var t in held) { t.Out = 0; pool.Return(t); }
        });
        Assert.InRange(pool.GetStatistics().Retained, 0, 64);
    }
}

public sealed class LockedPoolContractTests : ObjectPoolContractTests
{
    protected override IObjectPool<PooledThing> CreatePool(PoolPolicy<PooledThing> policy, PoolOptions options) => new LockedPool<PooledThing>(policy, options);
}

public sealed class SemiLocalPoolContractTests : ObjectPoolContractTests
{
    protected override IObjectPool<PooledThing> CreatePool(PoolPolicy<PooledThing> policy, PoolOptions options) => new SemiLocalPool<PooledThing>(policy, options);
}

/// <summary>A category of a <see cref="CategorizedPool{T}"/> is a full pool; the adapter disposes the whole categorized pool.</summary>
public sealed class CategorizedPoolContractTests : ObjectPoolContractTests
{
    protected override IObjectPool<PooledThing> CreatePool(PoolPolicy<PooledThing> policy, PoolOptions options)
        => new CategoryAdapter(new CategorizedPool<PooledThing>(policy, options));
}
