using Manaloc.AspNetCore.Diagnostics;
using Manaloc.AspNetCore.Dispatching;
using Manaloc.AspNetCore.ObjectPools;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.ObjectPool;
using Microsoft.Extensions.Options;

namespace Manaloc.AspNetCore;

/// <summary>
/// The registrations that put Manaloc into an ASP.NET Core or generic-host application, one call each.
/// </summary>
/// <remarks>
/// Each binds its options from the host's configuration (section named on the options class) and validates
/// them when the host starts, so a bad value fails the start with a message naming the key, and so does a key
/// under <c>Manaloc:</c> that no registration of the host reads (a misspelled setting, section or dispatcher name). Call them while
/// building the services; they are not thread-safe (as <see cref="IServiceCollection"/> is not).
/// </remarks>
public static partial class ManalocServiceCollectionExtensions
{
    /// <summary>
    /// Makes Manaloc's <see cref="ManalocObjectPoolProvider"/> the <see cref="ObjectPoolProvider"/> (replacing any
    /// registered before, and winning over ASP.NET Core's <c>TryAdd</c> after), and registers the open generic
    /// <see cref="ObjectPool{T}"/> (for <c>T</c> with a public parameterless constructor), so a resolved
    /// <c>ObjectPool&lt;T&gt;</c> is a Manaloc pool owned by the container.
    /// </summary>
    /// <param name="services">The services.</param>
    /// <param name="configure">Applied after the configuration section <see cref="ManalocObjectPoolOptions.SectionName"/>; null for none.</param>
    /// <returns><paramref name="services"/>.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="services"/> is null.</exception>
    public static IServiceCollection AddManalocObjectPools(this IServiceCollection services, Action<ManalocObjectPoolOptions>? configure = null)
    {
        services.AddManalocOptions(Options.DefaultName, ManalocObjectPoolOptions.SectionName, configure, static (o, section) => o.Problems(section));
        services.RemoveAll<ObjectPoolProvider>();
        services.AddSingleton<ObjectPoolProvider>(static provider =>
            new ManalocObjectPoolProvider(provider.GetRequiredService<IOptions<ManalocObjectPoolOptions>>().Value));
        services.RemoveAll(typeof(ObjectPool<>));
        services.AddSingleton(typeof(ObjectPool<>), typeof(DependencyObjectPool<>));
        return services;
    }

    /// <summary>
    /// Registers a <see cref="HostedDispatcher"/> named <paramref name="name"/>: a keyed singleton
    /// (<c>[FromKeyedServices(name)] HostedDispatcher</c>) whose dedicated threads start with the host and
    /// drain when it stops.
    /// </summary>
    /// <param name="services">The services.</param>
    /// <param name="name">The dispatcher's name (its key, its threads' name, the section <c>Manaloc:Dispatchers:{name}</c>).</param>
    /// <param name="configure">Applied after the configuration section; null for none.</param>
    /// <returns><paramref name="services"/>.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="services"/> or <paramref name="name"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty, or a dispatcher of that name is registered already.</exception>
    public static IServiceCollection AddDedicatedDispatcher(this IServiceCollection services, string name, Action<DedicatedDispatcherOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        if (services.Any(d => d.IsKeyedService && d.ServiceType == typeof(HostedDispatcher) && Equals(d.ServiceKey, name)))
            throw new ArgumentException($"A dedicated dispatcher named '{name}' is registered already.", nameof(name));
        services.AddManalocOptions(name, $"{DedicatedDispatcherOptions.SectionPrefix}:{name}", configure, static (o, section) => o.Problems(section));
        services.AddManalocMetrics();
        services.AddKeyedSingleton(name, static (provider, key) =>
        {
            string dispatcherName = (string)key!;
            var options = provider.GetRequiredService<IOptionsMonitor<DedicatedDispatcherOptions>>().Get(dispatcherName);
            var logger = provider.GetService<ILoggerFactory>()?.CreateLogger<HostedDispatcher>() ?? (ILogger)NullLogger.Instance;
            return new HostedDispatcher(dispatcherName, options, logger, provider.GetRequiredService<AspNetCoreMetrics>());
        });
        services.AddSingleton<IHostedService>(provider => new DispatcherHostedService(
            provider.GetRequiredKeyedService<HostedDispatcher>(name), provider.GetRequiredService<IOptions<HostOptions>>()));
        return services;
    }

    /// <summary>The package's meter, through the container's <see cref="System.Diagnostics.Metrics.IMeterFactory"/> when it has one.</summary>
    internal static IServiceCollection AddManalocMetrics(this IServiceCollection services)
    {
        services.TryAddSingleton(static provider => new AspNetCoreMetrics(provider.GetService<System.Diagnostics.Metrics.IMeterFactory>()));
        return services;
    }
}
