using System.Net.Http.Json;
using Manaloc.Collections;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.DependencyInjection;
using StackExchange.Redis;

namespace CacheService.Tests;

/// <summary>
/// The sample service with each second tier behind HybridCache: Manaloc's in-process off-heap cache and a Garnet server
/// (embedded by <see cref="GarnetFixture"/>). The same requests get the same answers from both, and each tier holds the
/// entries HybridCache wrote through to it.
/// </summary>
public sealed class CacheTierTests(GarnetFixture garnet) : IClassFixture<GarnetFixture>
{
    /// <summary>Requests, in order, and what each answers (a quote's JSON, a revision, a count of catalog loads).</summary>
    private static async Task<List<string>> Script(HttpClient client)
    {
        var answers = new List<string>();
        async Task Get(string path) => answers.Add($"GET {path} -> {await client.GetStringAsync(path)}");
        async Task Post(string path)
        {
            using var response = await client.PostAsync(path, null);
            response.EnsureSuccessStatusCode();
            answers.Add($"POST {path} -> {(int)response.StatusCode} {await response.Content.ReadAsStringAsync()}");
        }

        await Get("/prices/A-100");
        await Get("/prices/A-100");          // cached: no second load
        await Get("/prices/B-7");
        await Get("/loads");                 // 2
        await Post("/prices/A-100/reprice"); // revision 2, the cached quote removed
        await Get("/prices/A-100");          // loaded again: revision 2
        await Get("/prices/A-100");
        await Get("/loads");                 // 3
        await Post("/prices/invalidate");    // every quote (tag "prices")
        await Get("/prices/B-7");            // loaded again
        await Get("/loads");                 // 4
        return answers;
    }

    private static async Task<(WebApplication App, HttpClient Client)> StartAsync(params string[] settings)
    {
        var app = CacheServiceApp.Build(["--urls", "http://127.0.0.1:0", "--Logging:LogLevel:Default", "Warning", .. settings]);
        await app.StartAsync();
        string address = app.Services.GetRequiredService<Microsoft.AspNetCore.Hosting.Server.IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.Single();
        return (app, new HttpClient { BaseAddress = new Uri(address), Timeout = TimeSpan.FromSeconds(30) });
    }

    [Fact(Timeout = 120_000)]
    public async Task Both_tiers_answer_the_same_requests_the_same_way_and_hold_the_entries()
    {
        List<string> manaloc, garnetAnswers;
        var (app, client) = await StartAsync("--CacheService:Tier", "Manaloc", "--Manaloc:Cache:MaxBytes", "8388608");
        await using (app)
        using (client)
        {
            Assert.Equal("Manaloc", await client.GetStringAsync("/tier"));
            manaloc = await Script(client);
            await AssertSecondTierHolds(app, "A-100", "B-7");
            Assert.True(app.Services.GetRequiredService<NativeCache>().Count >= 2);
        }

        await FlushAsync();
        (app, client) = await StartAsync("--CacheService:Tier", "Garnet", "--CacheService:Garnet", garnet.Configuration);
        await using (app)
        using (client)
        {
            Assert.Equal("Garnet", await client.GetStringAsync("/tier"));
            garnetAnswers = await Script(client);
            await AssertSecondTierHolds(app, "A-100", "B-7");
            await using var redis = await ConnectionMultiplexer.ConnectAsync(garnet.Configuration);
            Assert.True(await redis.GetDatabase().KeyExistsAsync("cacheservice:" + CacheServiceApp.PriceKey("A-100")));
        }

        Assert.Equal(manaloc, garnetAnswers);
        Assert.Contains("GET /loads -> 4", manaloc);
        Assert.Contains("POST /prices/A-100/reprice -> 200 2", manaloc);
        Assert.Contains(manaloc, a => a.StartsWith("GET /prices/A-100 -> ", StringComparison.Ordinal) && a.Contains("\"revision\":2", StringComparison.Ordinal));
    }

    [Fact(Timeout = 120_000)]
    public async Task A_second_instance_over_the_same_Garnet_server_answers_from_it_without_loading()
    {
        await FlushAsync();
        var (first, firstClient) = await StartAsync("--CacheService:Tier", "Garnet", "--CacheService:Garnet", garnet.Configuration);
        var (second, secondClient) = await StartAsync("--CacheService:Tier", "Garnet", "--CacheService:Garnet", garnet.Configuration);
        await using (first)
        await using (second)
        using (firstClient)
        using (secondClient)
        {
            string quote = await firstClient.GetStringAsync("/prices/shared-1");
            Assert.Equal(quote, await secondClient.GetStringAsync("/prices/shared-1"));
            Assert.Equal(1, await firstClient.GetFromJsonAsync<int>("/loads"));
            Assert.Equal(0, await secondClient.GetFromJsonAsync<int>("/loads")); // its first tier was empty: the second tier answered
        }
    }

    [Fact]
    public void A_tier_setting_that_names_no_tier_stops_the_build_naming_the_key()
    {
        var e = Assert.Throws<InvalidOperationException>(() => CacheServiceApp.Build(["--CacheService:Tier", "Memcached"]));
        Assert.Contains("CacheService:Tier is 'Memcached'", e.Message);
    }

    /// <summary>The service's second tier (whichever it is) holds the quotes of <paramref name="skus"/>.</summary>
    private static async Task AssertSecondTierHolds(WebApplication app, params string[] skus)
    {
        var distributed = app.Services.GetRequiredService<IDistributedCache>();
        foreach (string sku in skus)
            Assert.NotNull(await distributed.GetAsync(CacheServiceApp.PriceKey(sku)));
    }

    /// <summary>Empties the Garnet server, so each test starts from no entries.</summary>
    private async Task FlushAsync()
    {
        await using var redis = await ConnectionMultiplexer.ConnectAsync(garnet.Configuration + ",allowAdmin=true");
        await redis.GetServer(redis.GetEndPoints().Single()).FlushAllDatabasesAsync();
    }
}
