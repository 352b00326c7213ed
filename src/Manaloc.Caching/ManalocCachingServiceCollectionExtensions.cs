using Manaloc.Collections;
using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Options;

namespace Manaloc.Caching;

/// <summary>The registration that makes a <see cref="NativeCache"/> the host's <see cref="IDistributedCache"/>.</summary>
/// <remarks>
/// Options are bound from the configuration section <see cref="SectionName"/> and validated when the host starts, so a
/// bad value fails the start with a message naming the key, and so does a key under <c>Manaloc:</c> that no registration
/// of the host reads (a misspelled setting). Call it while building the services; it is not thread-safe (as
/// <see cref="IServiceCollection"/> is not).
/// </remarks>
public static class ManalocCachingServiceCollectionExtensions
{
    /// <summary>The configuration section <see cref="NativeCacheOptions"/> are bound from: <c>Manaloc:Cache</c>.</summary>
    public const string SectionName = "Manaloc:Cache";

    /// <summary>
    /// Registers a <see cref="NativeCache"/> and a <see cref="ManalocDistributedCache"/> over it as singletons, and makes
    /// that adapter the <see cref="IDistributedCache"/> (replacing any registered before), so <c>HybridCache</c>
    /// (<c>AddHybridCache()</c>) keeps its second tier in this process's native memory.
    /// </summary>
    /// <param name="services">The services.</param>
    /// <param name="configure">Applied after the configuration section <see cref="SectionName"/>; null for none.
    /// <see cref="NativeCacheOptions.MaxBytes"/> has no default: set it here or in configuration.</param>
    /// <returns><paramref name="services"/>.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="services"/> is null.</exception>
    /// <remarks>
    /// <para>The cache's clock is the container's <see cref="TimeProvider"/> when one is registered (<c>AddHybridCache</c>
    /// registers <see cref="TimeProvider.System"/>), so both tiers expire on one clock; <paramref name="configure"/> may
    /// set another. The container disposes the cache, giving its native memory back, when it is disposed.</para>
    /// <para>A second call adds <paramref name="configure"/> to the first registration's options.</para>
    /// </remarks>
    public static IServiceCollection AddManalocDistributedCache(this IServiceCollection services, Action<NativeCacheOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(services);
        if (services.Any(static d => d.ServiceType == typeof(ManalocDistributedCache)))
        {
            if (configure is not null) services.Configure(configure);
            return services;
        }
        // Before the section and the caller's configure, which win over it.
        services.AddOptions<NativeCacheOptions>().Configure<IServiceProvider>(static (options, provider) =>
        {
            if (provider.GetService<TimeProvider>() is { } clock) options.TimeProvider = clock;
        });
        services.AddManalocOptions(Options.DefaultName, SectionName, configure, static (o, section) => NativeCacheOptionsProblems.Of(o, section));
        services.TryAddSingleton(static provider => new NativeCache(provider.GetRequiredService<IOptions<NativeCacheOptions>>().Value));
        services.TryAddSingleton(static provider => new ManalocDistributedCache(provider.GetRequiredService<NativeCache>()));
        services.RemoveAll<IDistributedCache>();
        services.AddSingleton<IDistributedCache>(static provider => provider.GetRequiredService<ManalocDistributedCache>());
        return services;
    }
}
