using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;

namespace Manaloc.Caching.Tests;

/// <summary>A generic host (a worker service's, no web server) with in-memory configuration.</summary>
internal static class TestHost
{
    public static IHost Build(Action<IServiceCollection> services, Dictionary<string, string?>? configuration = null)
    {
        var builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Configuration.AddInMemoryCollection(configuration ?? []);
        services(builder.Services);
        return builder.Build();
    }

    public static async Task<IHost> StartAsync(Action<IServiceCollection> services, Dictionary<string, string?>? configuration = null)
    {
        var host = Build(services, configuration);
        await host.StartAsync();
        return host;
    }

    public static async Task<Exception> StartFails(Action<IServiceCollection> services, Dictionary<string, string?> configuration)
    {
        using var host = Build(services, configuration);
        return await Assert.ThrowsAnyAsync<Exception>(() => host.StartAsync());
    }
}
