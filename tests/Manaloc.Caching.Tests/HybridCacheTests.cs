using Manaloc.Collections;
using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.Caching.Hybrid;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Time.Testing;

namespace Manaloc.Caching.Tests;

/// <summary>
/// HybridCache (<c>AddHybridCache()</c>) with Manaloc's cache as its second tier, end to end: what its first tier
/// (a <c>MemoryCache</c> of its own) no longer holds, it reads back from the native cache instead of running the factory.
/// </summary>
public sealed class HybridCacheTests
{
    private static ServiceProvider Services(Action<IServiceCollection> second)
    {
        var services = new ServiceCollection();
        second(services);
        services.AddHybridCache();
        return services.BuildServiceProvider();
    }

    private static ServiceProvider WithNativeTier() => Services(s => s.AddManalocDistributedCache(o => o.MaxBytes = 4 << 20));

    /// <summary>A second HybridCache (a fresh, empty first tier) over the same registered distributed cache.</summary>
    private static ServiceProvider Beside(ServiceProvider first)
    {
        var distributed = first.GetRequiredService<IDistributedCache>();
        return Services(s => s.AddSingleton(distributed));
    }

    [Fact]
    public async Task A_value_created_once_is_read_back_from_the_second_tier_by_a_cache_with_an_empty_first_tier()
    {
        await using var first = WithNativeTier();
        var native = first.GetRequiredService<ManalocDistributedCache>().Cache;
        int created = 0;
        var product = await first.GetRequiredService<HybridCache>().GetOrCreateAsync("product:42",
            _ => { created++; return ValueTask.FromResult(new Product(42, "Widget", 9.5m)); });
        Assert.Equal(1, created);
        Assert.Equal(1, native.Count); // written through to the second tier

        await using var second = Beside(first);
        long hits = native.GetStatistics().Hits;
        var again = await second.GetRequiredService<HybridCache>().GetOrCreateAsync("product:42",
            _ => { created++; return ValueTask.FromResult(new Product(0, "wrong", 0)); });
        Assert.Equal(1, created);
        Assert.Equal(product, again);
        Assert.Equal(hits + 1, native.GetStatistics().Hits);
    }

    [Fact]
    public async Task Strings_and_bytes_round_trip_through_the_second_tier()
    {
        await using var first = WithNativeTier();
        await first.GetRequiredService<HybridCache>().SetAsync("text", "héllo wörld");
        await first.GetRequiredService<HybridCache>().SetAsync("blob", Enumerable.Range(0, 10_000).Select(i => (byte)i).ToArray());
        await using var second = Beside(first);
        var cache = second.GetRequiredService<HybridCache>();
        Assert.Equal("héllo wörld", await cache.GetOrCreateAsync("text", _ => ValueTask.FromResult("factory ran")));
        Assert.Equal(Enumerable.Range(0, 10_000).Select(i => (byte)i).ToArray(), await cache.GetOrCreateAsync("blob", _ => ValueTask.FromResult(Array.Empty<byte>())));
    }

    [Fact]
    public async Task RemoveAsync_removes_the_entry_from_the_second_tier_too()
    {
        await using var first = WithNativeTier();
        var cache = first.GetRequiredService<HybridCache>();
        await cache.GetOrCreateAsync("k", _ => ValueTask.FromResult(1));
        Assert.Equal(1, first.GetRequiredService<ManalocDistributedCache>().Cache.Count);
        await cache.RemoveAsync("k");
        Assert.Equal(0, first.GetRequiredService<ManalocDistributedCache>().Cache.Count);

        await using var second = Beside(first);
        Assert.Equal(2, await second.GetRequiredService<HybridCache>().GetOrCreateAsync("k", _ => ValueTask.FromResult(2)));
    }

    [Fact]
    public async Task A_tag_removed_makes_the_tagged_entries_miss_in_a_cache_over_the_same_second_tier()
    {
        await using var first = WithNativeTier();
        var cache = first.GetRequiredService<HybridCache>();
        await cache.GetOrCreateAsync("a", _ => ValueTask.FromResult("a1"), tags: ["catalog"]);
        await cache.GetOrCreateAsync("b", _ => ValueTask.FromResult("b1"));
        await cache.RemoveByTagAsync("catalog");
        Assert.Equal("a2", await cache.GetOrCreateAsync("a", _ => ValueTask.FromResult("a2"), tags: ["catalog"]));
        Assert.Equal("b1", await cache.GetOrCreateAsync("b", _ => ValueTask.FromResult("b2")));
    }

    [Fact]
    public async Task An_entry_past_its_expiration_is_created_again()
    {
        await using var first = WithNativeTier();
        var options = new HybridCacheEntryOptions { Expiration = TimeSpan.FromMinutes(5) };
        await first.GetRequiredService<HybridCache>().GetOrCreateAsync("k", _ => ValueTask.FromResult(1), options);
        Assert.Equal(1, first.GetRequiredService<ManalocDistributedCache>().Cache.Count);
        first.GetRequiredService<ManalocDistributedCache>().Cache.Clear(); // as if the second tier had expired or evicted it
        await using var second = Beside(first);
        Assert.Equal(2, await second.GetRequiredService<HybridCache>().GetOrCreateAsync("k", _ => ValueTask.FromResult(2), options));
    }

    [Fact]
    public async Task Many_callers_of_a_few_keys_at_once_run_each_key_s_factory_once_and_store_it_once()
    {
        await using var provider = WithNativeTier();
        var cache = provider.GetRequiredService<HybridCache>();
        int runs = 0;
        using var release = new SemaphoreSlim(0);
        var callers = Enumerable.Range(0, 100).Select(i => Task.Run(() => cache.GetOrCreateAsync($"product:{i % 5}", async _ =>
        {
            Interlocked.Increment(ref runs);
            await release.WaitAsync(); // every caller arrives while the factories are still running
            return new Product(i % 5, "Widget", 1m);
        }).AsTask())).ToArray();
        while (Volatile.Read(ref runs) < 5) await Task.Delay(10);
        await Task.Delay(50);
        release.Release(1000);
        var products = await Task.WhenAll(callers);
        Assert.Equal(5, runs);
        Assert.All(products.Select((p, i) => (p, i)), x => Assert.Equal(x.i % 5, x.p.Id));
        Assert.Equal(5, provider.GetRequiredService<ManalocDistributedCache>().Cache.Count);
    }

    [Fact]
    public async Task The_second_tier_expires_on_the_container_s_clock()
    {
        var clock = new FakeTimeProvider(new DateTimeOffset(2026, 1, 1, 0, 0, 0, TimeSpan.Zero));
        await using var first = Services(s =>
        {
            s.AddSingleton<TimeProvider>(clock);
            s.AddManalocDistributedCache(o => o.MaxBytes = 4 << 20);
        });
        var options = new HybridCacheEntryOptions { Expiration = TimeSpan.FromMinutes(5) };
        await first.GetRequiredService<HybridCache>().GetOrCreateAsync("k", _ => ValueTask.FromResult(1), options);
        // Caches with empty first tiers over the same second tier, on the same clock (HybridCache stamps its payloads with it).
        var distributed = first.GetRequiredService<IDistributedCache>();
        ServiceProvider Beside() => Services(s => s.AddSingleton<TimeProvider>(clock).AddSingleton(distributed));
        await using var second = Beside();
        clock.Advance(TimeSpan.FromMinutes(4));
        Assert.NotNull(distributed.Get("k"));
        Assert.Equal(1, await second.GetRequiredService<HybridCache>().GetOrCreateAsync("k", _ => ValueTask.FromResult(2), options));
        await using var third = Beside();
        clock.Advance(TimeSpan.FromMinutes(2));
        Assert.Null(distributed.Get("k")); // the native tier itself, not only HybridCache's stamp, has expired it
        Assert.Equal(3, await third.GetRequiredService<HybridCache>().GetOrCreateAsync("k", _ => ValueTask.FromResult(3), options));
    }

    [Fact]
    public async Task A_value_above_the_entry_limit_reaches_the_caller_and_is_refused_by_the_second_tier_only()
    {
        await using var first = Services(s => s.AddManalocDistributedCache(o =>
        {
            o.MaxBytes = 4 << 20;
            o.MaxEntryBytes = 64 << 10;
        }));
        var native = first.GetRequiredService<ManalocDistributedCache>().Cache;
        var large = new string('x', 100_000);
        Assert.Equal(large, await first.GetRequiredService<HybridCache>().GetOrCreateAsync("large", _ => ValueTask.FromResult(large)));
        Assert.Equal(0, native.Count);
        Assert.Equal(1, native.GetStatistics().Refusals);
        await using var second = Beside(first);
        Assert.Equal("again", await second.GetRequiredService<HybridCache>().GetOrCreateAsync("large", _ => ValueTask.FromResult("again")));
    }

    [Fact]
    public async Task After_the_container_is_disposed_the_caches_throw_ObjectDisposedException()
    {
        var provider = WithNativeTier();
        var hybrid = provider.GetRequiredService<HybridCache>();
        var distributed = provider.GetRequiredService<IDistributedCache>();
        await hybrid.SetAsync("k", "v");
        await provider.DisposeAsync();
        Assert.Throws<ObjectDisposedException>(() => distributed.Get("k"));
        await Assert.ThrowsAsync<ObjectDisposedException>(() => distributed.SetAsync("k", [1], new DistributedCacheEntryOptions()));
        await Assert.ThrowsAnyAsync<ObjectDisposedException>(() => hybrid.GetOrCreateAsync("other", _ => ValueTask.FromResult("f")).AsTask());
    }

    public sealed record Product(int Id, string Name, decimal Price);
}
