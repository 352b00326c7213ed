using System.Net;
using System.Text.Json;
using System.Text.Json.Serialization;
using Manaloc.AspNetCore;
using Manaloc.AspNetCore.Dispatching;
using Manaloc.AspNetCore.Http;
using Manaloc.AspNetCore.Kestrel;
using Manaloc.Caching;
using Manaloc.Collections;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.ObjectPool;

// A user's first web application against the package: every registration, real Kestrel on 127.0.0.1, real
// requests, then every documentation snippet. Exits non-zero (an exception) if anything promised does not hold.

Console.WriteLine($"Manaloc.AspNetCore {typeof(HostedDispatcher).Assembly.GetName().Version} from {typeof(HostedDispatcher).Assembly.Location}");

var builder = WebApplication.CreateSlimBuilder(args);
builder.WebHost.UseKestrel(o => o.Listen(IPAddress.Loopback, 0));
builder.Logging.ClearProviders();
builder.Services.AddManalocKestrelMemoryPool();
builder.Services.AddManalocObjectPools();
builder.Services.AddDedicatedDispatcher("cpu", o => o.ThreadCount = 1);
builder.Services.AddManalocDistributedCache(o => o.MaxBytes = 8 << 20);
var app = builder.Build();
app.MapGet("/square/{n:int}", (int n, HttpContext context, [FromKeyedServices("cpu")] HostedDispatcher cpu)
    => cpu.RunAsync(context, () => $"{n * n} on {Thread.CurrentThread.Name}"));
app.MapGet("/json/{n:int}", (int n) => ManalocResults.Json(new Squared(n, n * n), ConsumerJson.Default.Squared));
app.MapGet("/cached/{n:int}", async (int n, IDistributedCache cache) =>
{
    string key = $"square:{n}";
    if (await cache.GetStringAsync(key) is { } cached) return "cached " + cached;
    await cache.SetStringAsync(key, (n * n).ToString(System.Globalization.CultureInfo.InvariantCulture), new DistributedCacheEntryOptions { SlidingExpiration = TimeSpan.FromMinutes(1) });
    return "computed";
});
await app.StartAsync();

string address = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.Single();
using (var client = new HttpClient { BaseAddress = new Uri(address) })
{
    string answer = await client.GetStringAsync("/square/12");
    Console.WriteLine($"GET /square/12: {answer}");
    Check(answer.Contains("144 on cpu", StringComparison.Ordinal), $"the dispatcher did not run the work: {answer}");
    string json = await client.GetStringAsync("/json/12");
    Console.WriteLine($"GET /json/12: {json}");
    Check(json == """{"n":12,"square":144}""", $"ManalocResults.Json did not answer the document: {json}");
    string first = await client.GetStringAsync("/cached/12"), second = await client.GetStringAsync("/cached/12");
    Console.WriteLine($"GET /cached/12 twice: {first}, {second}");
    Check(first == "computed" && second == "cached 144", $"the distributed cache did not keep the value: {first}, {second}");
}
Check(app.Services.GetRequiredService<ObjectPoolProvider>().GetType().Name == "ManalocObjectPoolProvider", "the ObjectPoolProvider is not Manaloc's");
Check(app.Services.GetRequiredService<IDistributedCache>() is ManalocDistributedCache, "the IDistributedCache is not Manaloc's");
var nativeCache = app.Services.GetRequiredService<NativeCache>();
Check(nativeCache.Count == 1 && nativeCache.GetStatistics().Hits == 1, $"the native cache did not hold and hit the entry: {nativeCache.Count} entries, {nativeCache.GetStatistics().Hits} hits");
var pool = app.Services.GetRequiredService<ObjectPool<List<int>>>();
var list = pool.Get();
pool.Return(list);
Check(ReferenceEquals(list, pool.Get()), "the ObjectPool<T> from DI did not reuse a returned object");
var kestrelPool = app.Services.GetRequiredService<ManalocMemoryPoolFactory>();
Check(kestrelPool.GetStatistics().Rents > 0, "Kestrel did not rent from Manaloc's memory pool");
await app.StopAsync();
Check(kestrelPool.GetStatistics().Outstanding == 0, $"Kestrel's buffers were not all returned: {kestrelPool.GetStatistics()}");
Console.WriteLine($"Kestrel's memory pool after shutdown: {kestrelPool.GetStatistics()}");
Check(app.Services.GetRequiredKeyedService<HostedDispatcher>("cpu").GetStatistics().Completed == 1, "the dispatcher's statistics did not count the request");

int snippets = 0;
#if SNIPPETS
foreach (var (name, run) in Snippets.Registry.All)
{
    Console.WriteLine($"snippet {name}");
    run();
    snippets++;
}
#endif
Console.WriteLine($"aspnetcore package consumer: all checks passed, {snippets} documentation snippet(s) compiled and ran");

static void Check(bool condition, string failure)
{
    if (!condition) throw new InvalidOperationException("aspnetcore package consumer: " + failure);
}

internal sealed record Squared(int N, int Square);

[JsonSourceGenerationOptions(JsonSerializerDefaults.Web)]
[JsonSerializable(typeof(Squared))]
internal sealed partial class ConsumerJson : JsonSerializerContext;
