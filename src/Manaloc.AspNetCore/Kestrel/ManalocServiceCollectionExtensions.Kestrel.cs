using System.Diagnostics.Metrics;
using Manaloc.AspNetCore.Diagnostics;
using Manaloc.AspNetCore.Kestrel;
using Microsoft.AspNetCore.Connections;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Options;

namespace Manaloc.AspNetCore;

public static partial class ManalocServiceCollectionExtensions
{
    /// <summary>
    /// Makes <see cref="ManalocMemoryPoolFactory"/> the container's <see cref="IMemoryPoolFactory{T}"/> of bytes
    /// (replacing any registered before, and winning over Kestrel's <c>TryAdd</c> after), so Kestrel's socket
    /// transport rents its buffers from Manaloc's <see cref="Buffers.BufferMemoryPool"/>. The factory is also
    /// registered as itself, for its statistics.
    /// </summary>
    /// <param name="services">The services.</param>
    /// <param name="configure">Applied after the configuration section <see cref="ManalocMemoryPoolOptions.SectionName"/>; null for none.</param>
    /// <returns><paramref name="services"/>.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="services"/> is null.</exception>
    public static IServiceCollection AddManalocKestrelMemoryPool(this IServiceCollection services, Action<ManalocMemoryPoolOptions>? configure = null)
    {
        services.AddManalocOptions(Options.DefaultName, ManalocMemoryPoolOptions.SectionName, configure, static (o, section) => o.Problems(section));
        services.AddManalocMetrics();
        services.TryAddSingleton(static provider =>
        {
            var factory = new ManalocMemoryPoolFactory(provider.GetRequiredService<IOptions<ManalocMemoryPoolOptions>>().Value);
            provider.GetRequiredService<AspNetCoreMetrics>().ObserveMemoryPools(factory);
            return factory;
        });
        services.RemoveAll<IMemoryPoolFactory<byte>>();
        services.AddSingleton<IMemoryPoolFactory<byte>>(static provider => provider.GetRequiredService<ManalocMemoryPoolFactory>());
        return services;
    }
}
