using Manaloc.Collections;
using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.Caching.Hybrid;
using Microsoft.Extensions.DependencyInjection;

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
        var native = first.GetRequiredService<NativeCache>();
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
        Assert.Equal(1, first.GetRequiredService<NativeCache>().Count);
        await cache.RemoveAsync("k");
        Assert.Equal(0, first.GetRequiredService<NativeCache>().Count);

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
        Assert.Equal(1, first.GetRequiredService<NativeCache>().Count);
        first.GetRequiredService<NativeCache>().Clear(); // as if the second tier had expired or evicted it
        await using var second = Beside(first);
        Assert.Equal(2, await second.GetRequiredService<HybridCache>().GetOrCreateAsync("k", _ => ValueTask.FromResult(2), options));
    }

    public sealed record Product(int Id, string Name, decimal Price);
}
