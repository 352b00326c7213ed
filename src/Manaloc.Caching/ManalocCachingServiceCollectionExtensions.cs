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
    /// Registers a <see cref="ManalocDistributedCache"/> over a <see cref="NativeCache"/> of its own, made from these
    /// options, as a singleton, and makes it the <see cref="IDistributedCache"/> (replacing any registered before), so
    /// <c>HybridCache</c> (<c>AddHybridCache()</c>) keeps its second tier in this process's native memory.
    /// </summary>
    /// <param name="services">The services.</param>
    /// <param name="configure">Applied after the configuration section <see cref="SectionName"/>; null for none.
    /// <see cref="NativeCacheOptions.MaxBytes"/> has no default: set it here or in configuration.</param>
    /// <returns><paramref name="services"/>.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="services"/> is null.</exception>
    /// <exception cref="InvalidOperationException">A <see cref="ManalocDistributedCache"/> is registered already, not by
    /// this method: its cache would be shadowed, or would shadow the one these options configure.</exception>
    /// <remarks>
    /// <para>The cache is the adapter's own, made from these options, as <c>MemoryDistributedCache</c>'s <c>MemoryCache</c>
    /// is: a <see cref="NativeCache"/> the application registers for itself stays its own and never takes these options'
    /// place. The adapter's cache is also the <see cref="NativeCache"/> service when the application registered none
    /// before this call; it is always <see cref="ManalocDistributedCache.Cache"/> (resolve <see cref="ManalocDistributedCache"/>
    /// for its statistics or its <see cref="NativeCache.Clear"/>). To put an
    /// <see cref="IDistributedCache"/> over a cache you make yourself, register <c>new ManalocDistributedCache(cache)</c>
    /// instead of calling this method.</para>
    /// <para>The cache's clock is the container's <see cref="TimeProvider"/> when one is registered (<c>AddHybridCache</c>
    /// registers <see cref="TimeProvider.System"/>), so both tiers expire on one clock; <paramref name="configure"/> may
    /// set another. The container disposes the cache, giving its native memory back, when it is disposed.</para>
    /// <para>A second call adds <paramref name="configure"/> to the first registration's options.</para>
    /// </remarks>
    public static IServiceCollection AddManalocDistributedCache(this IServiceCollection services, Action<NativeCacheOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(services);
        if (services.Any(static d => d.ServiceType == typeof(OwnedNativeCache)))
        {
            if (configure is not null) services.Configure(configure);
            return services;
        }
        if (services.FirstOrDefault(static d => d.ServiceType == typeof(ManalocDistributedCache) && !d.IsKeyedService) is { } registered)
        {
            throw new InvalidOperationException($"A {nameof(ManalocDistributedCache)} is registered already ({Describe(registered)}), so "
                + $"{nameof(AddManalocDistributedCache)} cannot make its own from the options in {SectionName} and its configure delegate without one of the two "
                + $"caches hiding the other. Either register your {nameof(ManalocDistributedCache)} (over your {nameof(NativeCache)}) as the {nameof(IDistributedCache)} "
                + $"and do not call {nameof(AddManalocDistributedCache)}, or remove that registration and configure the cache through {nameof(AddManalocDistributedCache)}.");
        }
        // Before the section and the caller's configure, which win over it.
        services.AddOptions<NativeCacheOptions>().Configure<IServiceProvider>(static (options, provider) =>
        {
            if (provider.GetService<TimeProvider>() is { } clock) options.TimeProvider = clock;
        });
        services.AddManalocOptions(Options.DefaultName, SectionName, configure, static (o, section) => NativeCacheOptionsProblems.Of(o, section));
        services.AddSingleton(static provider => new OwnedNativeCache(provider.GetRequiredService<IOptions<NativeCacheOptions>>().Value));
        services.AddSingleton(static provider => new ManalocDistributedCache(provider.GetRequiredService<OwnedNativeCache>().Cache));
        // The NativeCache service, unless the application has its own: resolving it gives the cache the options made (its
        // Dispose is idempotent, so the container disposing it here and through OwnedNativeCache is harmless).
        services.TryAddSingleton(static provider => provider.GetRequiredService<OwnedNativeCache>().Cache);
        services.RemoveAll<IDistributedCache>();
        services.AddSingleton<IDistributedCache>(static provider => provider.GetRequiredService<ManalocDistributedCache>());
        return services;
    }

    private static string Describe(ServiceDescriptor descriptor)
        => descriptor.ImplementationInstance is not null ? "as an instance"
            : descriptor.ImplementationFactory is not null ? $"by a factory, {descriptor.Lifetime}"
            : $"as {descriptor.ImplementationType?.Name}, {descriptor.Lifetime}";

    /// <summary>
    /// The registration's cache, a service of a type only this package names, so no registration of the application's
    /// can replace it or be replaced by it; the container disposes it, and with it the cache's native memory.
    /// </summary>
    internal sealed class OwnedNativeCache(NativeCacheOptions options) : IDisposable
    {
        public NativeCache Cache { get; } = new(options);

        public void Dispose() => Cache.Dispose();
    }
}
