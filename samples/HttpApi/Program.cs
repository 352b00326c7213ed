using System.Net;
using HttpApi;
using Manaloc.AspNetCore;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.ObjectPool;

// A minimal-API service in two builds: ASP.NET Core's defaults, or Manaloc wired in (Kestrel's memory pool,
// object pools, a dedicated dispatcher with a share per client, JSON written into pooled buffers).
var options = ServiceOptions.Parse(args);
if (options is null)
{
    Console.WriteLine(ServiceOptions.Help);
    return 0;
}

using var allocations = options.AllocationProfile is null ? null : new AllocationProfile();
var builder = WebApplication.CreateSlimBuilder(new WebApplicationOptions { Args = [] });
builder.WebHost.UseKestrel(k => k.Listen(IPAddress.Loopback, options.Port));
builder.Logging.ClearProviders();
builder.Logging.AddSimpleConsole().SetMinimumLevel(LogLevel.Warning);
builder.Services.ConfigureHttpJsonOptions(o => o.SerializerOptions.TypeInfoResolverChain.Insert(0, ApiJson.Default));
using var counters = new ServiceCounters();
builder.Services.AddSingleton(counters);
if (options.Manaloc)
{
    ManalocBuild.AddServices(builder.Services, options);
}
else
{
    // The defaults: Microsoft.Extensions.ObjectPool's provider, the same ObjectPool<SkuSet> registration the code needs.
    builder.Services.AddSingleton<ObjectPoolProvider, DefaultObjectPoolProvider>();
    builder.Services.AddSingleton(static sp => sp.GetRequiredService<ObjectPoolProvider>().Create(new DefaultPooledObjectPolicy<SkuSet>()));
}

var app = builder.Build();
app.Use((context, next) =>
{
    counters.CountRequest();
    return next(context);
});
if (options.Manaloc) ManalocBuild.MapEndpoints(app, options);
else DefaultsBuild.MapEndpoints(app, options);
app.MapGet("/stats", (ServiceCounters c, IServiceProvider services) => TypedResults.Ok(c.Snapshot(options.BuildName, services)));

await app.StartAsync();
string address = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.Single();
// The lab reads this line for the port.
Console.WriteLine($"HttpApi listening on {address} (build {options.BuildName})");
Console.Out.Flush();
if (options.StopOnStdinEof)
{
    // The parent closes our stdin to ask for a graceful stop (works the same on every OS).
    _ = Task.Run(async () =>
    {
        while (await Console.In.ReadLineAsync() is not null)
        {
        }
        await app.StopAsync();
    });
}
await app.WaitForShutdownAsync();
if (allocations is not null) File.WriteAllText(options.AllocationProfile!.Replace("{build}", options.BuildName, StringComparison.Ordinal), allocations.Report());
Console.WriteLine($"HttpApi stopped: {counters.Served} requests served");
return 0;
