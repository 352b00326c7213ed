using Manaloc.Caching;
using Microsoft.Extensions.Caching.Hybrid;

namespace CacheService;

/// <summary>The service's composition: its one cache switch, HybridCache, and the endpoints.</summary>
public static class CacheServiceApp
{
    /// <summary>The setting that picks the second tier (<see cref="CacheTier"/>; default <see cref="CacheTier.Manaloc"/>).</summary>
    public const string TierKey = "CacheService:Tier";

    /// <summary>The Garnet server's StackExchange.Redis configuration string, read when the tier is <see cref="CacheTier.Garnet"/>.</summary>
    public const string GarnetKey = "CacheService:Garnet";

    /// <summary>Builds the service from <paramref name="args"/> (command line, then environment and appsettings.json as usual).</summary>
    /// <param name="args">The command line.</param>
    /// <param name="services">Applied after the service's own registrations (a host embedding the service, or a test
    /// wrapping the second tier); null for none.</param>
    /// <exception cref="InvalidOperationException">The tier setting names no tier, or the Garnet tier has no server.</exception>
    public static WebApplication Build(string[] args, Action<IServiceCollection>? services = null)
    {
        var builder = WebApplication.CreateBuilder(args);
        var tier = ReadTier(builder.Configuration);
        switch (tier)
        {
            case CacheTier.Manaloc:
                // The budget and the rest from Manaloc:Cache, validated when the service starts.
                builder.Services.AddManalocDistributedCache();
                break;
            case CacheTier.Garnet:
                string server = builder.Configuration[GarnetKey] is { Length: > 0 } configured
                    ? configured
                    : throw new InvalidOperationException($"{GarnetKey} must name the Garnet server (host:port) when {TierKey} is {CacheTier.Garnet}.");
                builder.Services.AddStackExchangeRedisCache(options =>
                {
                    options.Configuration = server;
                    options.InstanceName = "cacheservice:";
                });
                break;
        }
        builder.Services.AddHybridCache();
        builder.Services.AddSingleton<PriceCatalog>();
        services?.Invoke(builder.Services);

        var app = builder.Build();
        app.MapGet("/tier", () => tier.ToString());
        app.MapGet("/prices/{sku}", (string sku, HybridCache cache, PriceCatalog catalog, CancellationToken cancellationToken)
            => cache.GetOrCreateAsync(
                PriceKey(sku),
                (catalog, sku),
                static (state, token) => state.catalog.LoadAsync(state.sku, token),
                new HybridCacheEntryOptions { Expiration = TimeSpan.FromMinutes(10), LocalCacheExpiration = TimeSpan.FromMinutes(1) },
                tags: ["prices"],
                cancellationToken: cancellationToken));
        app.MapPost("/prices/{sku}/reprice", async (string sku, HybridCache cache, PriceCatalog catalog, CancellationToken cancellationToken) =>
        {
            int revision = catalog.Reprice(sku);
            await cache.RemoveAsync(PriceKey(sku), cancellationToken); // both tiers: the next read loads the new price
            return Results.Ok(revision);
        });
        app.MapPost("/prices/invalidate", async (HybridCache cache, CancellationToken cancellationToken) =>
        {
            await cache.RemoveByTagAsync("prices", cancellationToken);
            return Results.NoContent();
        });
        app.MapGet("/loads", (PriceCatalog catalog) => catalog.Loads);
        return app;
    }

    /// <summary>The cache key of <paramref name="sku"/>'s quote.</summary>
    public static string PriceKey(string sku) => "price:" + sku;

    private static CacheTier ReadTier(IConfiguration configuration)
    {
        string? value = configuration[TierKey];
        if (string.IsNullOrEmpty(value)) return CacheTier.Manaloc;
        return Enum.TryParse<CacheTier>(value, ignoreCase: true, out var tier) && Enum.IsDefined(tier)
            ? tier
            : throw new InvalidOperationException($"{TierKey} is '{value}': it must be {string.Join(" or ", Enum.GetNames<CacheTier>())}.");
    }
}
