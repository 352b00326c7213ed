using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.DependencyInjection;

namespace CacheService.Tests;

/// <summary>
/// The service's second tier with its timing made worse: HybridCache's reads of tag invalidation times (its keys start
/// with <see cref="TagKeyPrefix"/>) take <see cref="TagReadDelay"/>, and every write lands <see cref="WriteDelay"/> late
/// (the tag read outlasts the write, so a request can find the quote in the second tier while its tag is unknown). The
/// values are the inner tier's, unchanged. Only <see cref="IDistributedCache"/> is offered, so HybridCache uses its
/// byte-array path.
/// </summary>
public sealed class SlowSecondTier(IDistributedCache inner) : IDistributedCache
{
    /// <summary>The prefix of HybridCache's tag invalidation keys in its second tier.</summary>
    public const string TagKeyPrefix = "__MSFT_HCT__";

    public static readonly TimeSpan TagReadDelay = TimeSpan.FromMilliseconds(600);

    public static readonly TimeSpan WriteDelay = TimeSpan.FromMilliseconds(200);

    private int _tagReads;

    /// <summary>How many tag invalidation times were read through this tier.</summary>
    public int TagReads => Volatile.Read(ref _tagReads);

    /// <summary>Replaces the registered <see cref="IDistributedCache"/> with this wrapper around it.</summary>
    public static void Wrap(IServiceCollection services)
    {
        var registered = services.Last(d => d.ServiceType == typeof(IDistributedCache) && !d.IsKeyedService);
        services.Remove(registered);
        const string Inner = "inner";
        services.Add(registered.ImplementationType is { } type
            ? ServiceDescriptor.KeyedSingleton(typeof(IDistributedCache), Inner, type)
            : ServiceDescriptor.KeyedSingleton(typeof(IDistributedCache), Inner, (provider, _) => registered.ImplementationFactory!(provider)));
        services.AddSingleton(provider => new SlowSecondTier(provider.GetRequiredKeyedService<IDistributedCache>(Inner)));
        services.AddSingleton<IDistributedCache>(provider => provider.GetRequiredService<SlowSecondTier>());
    }

    public byte[]? Get(string key) => inner.Get(key);

    public async Task<byte[]?> GetAsync(string key, CancellationToken token = default)
    {
        if (key.StartsWith(TagKeyPrefix, StringComparison.Ordinal))
        {
            Interlocked.Increment(ref _tagReads);
            await Task.Delay(TagReadDelay, token);
        }
        return await inner.GetAsync(key, token);
    }

    public void Set(string key, byte[] value, DistributedCacheEntryOptions options) => inner.Set(key, value, options);

    public async Task SetAsync(string key, byte[] value, DistributedCacheEntryOptions options, CancellationToken token = default)
    {
        await Task.Delay(WriteDelay, token);
        await inner.SetAsync(key, value, options, token);
    }

    public void Refresh(string key) => inner.Refresh(key);

    public Task RefreshAsync(string key, CancellationToken token = default) => inner.RefreshAsync(key, token);

    public void Remove(string key) => inner.Remove(key);

    public Task RemoveAsync(string key, CancellationToken token = default) => inner.RemoveAsync(key, token);
}
