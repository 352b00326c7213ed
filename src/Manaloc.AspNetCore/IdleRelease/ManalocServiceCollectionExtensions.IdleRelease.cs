using Manaloc.AspNetCore.IdleRelease;
using Manaloc.AspNetCore.Kestrel;
using Microsoft.AspNetCore.Hosting;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;

namespace Manaloc.AspNetCore;

public static partial class ManalocServiceCollectionExtensions
{
    /// <summary>
    /// When no request has started for <see cref="IdleReleaseOptions.QuietAfter"/> and none is still running, trims the Kestrel memory pools of
    /// <see cref="AddManalocKestrelMemoryPool"/> (when registered) and runs one aggressive, compacting collection, so a
    /// service that has gone quiet gives back the memory a burst made it take; once per quiet spell. Each release counts on
    /// the package's meter (<see cref="Diagnostics.ManalocAspNetCoreTelemetry.IdleReleases"/>) and is logged at Information.
    /// </summary>
    /// <param name="services">The services.</param>
    /// <param name="configure">Applied after the configuration section <see cref="IdleReleaseOptions.SectionName"/>; null for none.</param>
    /// <returns><paramref name="services"/>.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="services"/> is null.</exception>
    /// <remarks>
    /// Requests are seen by a middleware put first in the pipeline (an <see cref="IStartupFilter"/>); the check runs on a
    /// timer of the container's <see cref="TimeProvider"/> (the system's when there is none). The collection pauses the
    /// process, which is why it waits for quiet; a request that arrives during it waits for it. Opt in only where that
    /// pause, once after each burst, is worth the memory.
    /// </remarks>
    public static IServiceCollection AddManalocIdleRelease(this IServiceCollection services, Action<IdleReleaseOptions>? configure = null)
    {
        services.AddManalocOptions(Options.DefaultName, IdleReleaseOptions.SectionName, configure, static (o, section) => o.Problems(section));
        services.AddManalocMetrics();
        services.TryAddIdleRelease();
        return services;
    }

    private static void TryAddIdleRelease(this IServiceCollection services)
    {
        if (services.Any(d => d.ServiceType == typeof(IdleReleaseService))) return;
        services.AddSingleton(static provider => new IdleReleaseService(
            provider.GetRequiredService<IOptions<IdleReleaseOptions>>().Value,
            provider.GetService<TimeProvider>() ?? TimeProvider.System,
            provider.GetService<ILoggerFactory>()?.CreateLogger<IdleReleaseService>() ?? (ILogger)NullLogger.Instance,
            provider.GetRequiredService<Diagnostics.AspNetCoreMetrics>(),
            provider.GetService<ManalocMemoryPoolFactory>()));
        services.AddSingleton<IHostedService>(static provider => provider.GetRequiredService<IdleReleaseService>());
        services.AddSingleton<IStartupFilter>(static provider => new IdleReleaseService.Filter(provider.GetRequiredService<IdleReleaseService>()));
    }
}
