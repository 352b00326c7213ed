using System.Net.Http.Json;
using Manaloc.Caching;
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
    /// <remarks>
    /// After each quote, the script waits (bounded) until the second tier holds it before the next request. HybridCache
    /// answers a caller as soon as the factory has run and writes its second tier after that, in the background; and a
    /// tagged entry in its first tier counts as invalid while the tag's invalidation time is still being read from the
    /// second tier (a remote one: a round trip, longer while the connection is made) or could not be read. A request
    /// that comes in that window goes to the second tier, and runs the factory again if the write has not landed. So
    /// HybridCache promises one load per quote only once the second tier holds it: that is what the load counts below
    /// assert, and a tier that stops caching fails the wait.
    /// </remarks>
    private static async Task<List<string>> Script(HttpClient client, WebApplication app, TimeSpan? settle = null)
    {
        var answers = new List<string>();
        async Task Get(string path) => answers.Add($"GET {path} -> {await client.GetStringAsync(path)}");
        async Task Quote(string sku)
        {
            await Get($"/prices/{sku}");
            await SecondTierHoldsAsync(app, sku, settle ?? TimeSpan.FromSeconds(20));
        }
        async Task Post(string path)
        {
            using var response = await client.PostAsync(path, null);
            response.EnsureSuccessStatusCode();
            answers.Add($"POST {path} -> {(int)response.StatusCode} {await response.Content.ReadAsStringAsync()}");
        }

        await Quote("A-100");
        await Quote("A-100");                // cached: no second load
        await Quote("B-7");
        await Get("/loads");                 // 2
        await Post("/prices/A-100/reprice"); // revision 2, the cached quote removed
        await Quote("A-100");                // loaded again: revision 2
        await Quote("A-100");
        await Get("/loads");                 // 3
        await Post("/prices/invalidate");    // every quote (tag "prices")
        await Quote("B-7");                  // loaded again
        await Get("/loads");                 // 4
        return answers;
    }

    /// <summary>The load counts the script's answers give, in order: what caching saves.</summary>
    private static readonly string[] ScriptLoads = ["GET /loads -> 2", "GET /loads -> 3", "GET /loads -> 4"];

    private static string[] Loads(List<string> answers) => answers.Where(a => a.StartsWith("GET /loads", StringComparison.Ordinal)).ToArray();

    private static Task<(WebApplication App, HttpClient Client)> StartAsync(params string[] settings) => StartAsync(null, settings);

    private static async Task<(WebApplication App, HttpClient Client)> StartAsync(Action<IServiceCollection>? services, params string[] settings)
    {
        var app = CacheServiceApp.Build(["--urls", "http://127.0.0.1:0", "--Logging:LogLevel:Default", "Warning", .. settings], services);
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
            manaloc = await Script(client, app);
            await AssertSecondTierHolds(app, "A-100", "B-7");
            Assert.True(app.Services.GetRequiredService<ManalocDistributedCache>().Cache.Count >= 2);
        }

        await FlushAsync();
        (app, client) = await StartAsync("--CacheService:Tier", "Garnet", "--CacheService:Garnet", garnet.Configuration);
        await using (app)
        using (client)
        {
            Assert.Equal("Garnet", await client.GetStringAsync("/tier"));
            garnetAnswers = await Script(client, app);
            await AssertSecondTierHolds(app, "A-100", "B-7");
            await using var redis = await ConnectionMultiplexer.ConnectAsync(garnet.Configuration);
            Assert.True(await redis.GetDatabase().KeyExistsAsync("cacheservice:" + CacheServiceApp.PriceKey("A-100")));
        }

        Assert.Equal(manaloc, garnetAnswers);
        Assert.Equal(ScriptLoads, Loads(manaloc));
        Assert.Contains("POST /prices/A-100/reprice -> 200 2", manaloc);
        Assert.Contains(manaloc, a => a.StartsWith("GET /prices/A-100 -> ", StringComparison.Ordinal) && a.Contains("\"revision\":2", StringComparison.Ordinal));
    }

    [Fact(Timeout = 120_000)]
    public async Task A_remote_tier_whose_tag_reads_are_slow_and_whose_writes_land_late_still_loads_each_quote_once()
    {
        // The window the script waits out, made wide: every read of a tag's invalidation time takes 600 ms, and every
        // write lands 200 ms after HybridCache hands it over. Without the wait for the second tier, the second request
        // for a quote comes while the tag is unknown and the write has not landed, and loads the quote again.
        await FlushAsync();
        var slow = AlteredSecondTier.Wrap(inner => new(inner) { TagReadDelay = TimeSpan.FromMilliseconds(600), WriteDelay = TimeSpan.FromMilliseconds(200) });
        var (app, client) = await StartAsync(slow, "--CacheService:Tier", "Garnet", "--CacheService:Garnet", garnet.Configuration);
        await using (app)
        using (client)
        {
            var answers = await Script(client, app);
            Assert.Equal(ScriptLoads, Loads(answers));
            Assert.Contains(answers, a => a.StartsWith("GET /prices/A-100 -> ", StringComparison.Ordinal) && a.Contains("\"revision\":2", StringComparison.Ordinal));
            Assert.True(app.Services.GetRequiredService<AlteredSecondTier>().TagReads > 0); // the delay was on the path
        }
    }

    [Theory(Timeout = 120_000)]
    [InlineData("Manaloc")]
    [InlineData("Garnet")]
    public async Task A_second_tier_that_stops_caching_fails_the_script(string tier)
    {
        await FlushAsync();
        var dropping = AlteredSecondTier.Wrap(inner => new(inner) { DropWrites = true });
        var (app, client) = await StartAsync(dropping, "--CacheService:Tier", tier, "--CacheService:Garnet", garnet.Configuration, "--Manaloc:Cache:MaxBytes", "8388608");
        await using (app)
        using (client)
        {
            var e = await Assert.ThrowsAnyAsync<Xunit.Sdk.XunitException>(() => Script(client, app, settle: TimeSpan.FromSeconds(2)));
            Assert.Contains("the tier does not cache", e.Message);
        }
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

    /// <summary>Waits until the service's second tier holds the quote of <paramref name="sku"/> (HybridCache writes it after answering).</summary>
    private static async Task SecondTierHoldsAsync(WebApplication app, string sku, TimeSpan within)
    {
        var distributed = app.Services.GetRequiredService<IDistributedCache>();
        var deadline = DateTime.UtcNow + within;
        while (await distributed.GetAsync(CacheServiceApp.PriceKey(sku)) is null)
        {
            Assert.True(DateTime.UtcNow < deadline, $"The second tier did not hold {CacheServiceApp.PriceKey(sku)} within {within.TotalSeconds} s of answering it: the tier does not cache.");
            await Task.Delay(10);
        }
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
