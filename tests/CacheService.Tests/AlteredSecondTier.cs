using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.DependencyInjection;

namespace CacheService.Tests;

/// <summary>
/// The service's second tier with its timing made worse or its writes dropped: HybridCache's reads of tag invalidation
/// times (its keys start with <see cref="TagKeyPrefix"/>) take <see cref="TagReadDelay"/>, every write lands
/// <see cref="WriteDelay"/> late, and with <see cref="DropWrites"/> none lands (a tier that stopped caching). Values
/// read are the inner tier's, unchanged. Only <see cref="IDistributedCache"/> is offered, so HybridCache uses its
/// byte-array path.
/// </summary>
public sealed class AlteredSecondTier(IDistributedCache inner) : IDistributedCache
{
    /// <summary>The prefix of HybridCache's tag invalidation keys in its second tier.</summary>
    public const string TagKeyPrefix = "__MSFT_HCT__";

    private int _tagReads;

    public TimeSpan TagReadDelay { get; init; }

    public TimeSpan WriteDelay { get; init; }

    public bool DropWrites { get; init; }

    /// <summary>How many tag invalidation times were read through this tier.</summary>
    public int TagReads => Volatile.Read(ref _tagReads);

    /// <summary>Replaces the registered <see cref="IDistributedCache"/> with <paramref name="alter"/>'s wrapper around it.</summary>
    public static Action<IServiceCollection> Wrap(Func<IDistributedCache, AlteredSecondTier> alter) => services =>
    {
        var registered = services.Last(d => d.ServiceType == typeof(IDistributedCache) && !d.IsKeyedService);
        services.Remove(registered);
        const string Inner = "inner";
        services.Add(registered.ImplementationType is { } type
            ? ServiceDescriptor.KeyedSingleton(typeof(IDistributedCache), Inner, type)
            : ServiceDescriptor.KeyedSingleton(typeof(IDistributedCache), Inner, (provider, _) => registered.ImplementationFactory!(provider)));
        services.AddSingleton(provider => alter(provider.GetRequiredKeyedService<IDistributedCache>(Inner)));
        services.AddSingleton<IDistributedCache>(provider => provider.GetRequiredService<AlteredSecondTier>());
    };

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

    public void Set(string key, byte[] value, DistributedCacheEntryOptions options)
    {
        if (!DropWrites) inner.Set(key, value, options);
    }

    public async Task SetAsync(string key, byte[] value, DistributedCacheEntryOptions options, CancellationToken token = default)
    {
        await Task.Delay(WriteDelay, token);
        if (!DropWrites) await inner.SetAsync(key, value, options, token);
    }

    public void Refresh(string key) => inner.Refresh(key);

    public Task RefreshAsync(string key, CancellationToken token = default) => inner.RefreshAsync(key, token);

    public void Remove(string key) => inner.Remove(key);

    public Task RemoveAsync(string key, CancellationToken token = default) => inner.RemoveAsync(key, token);
}
