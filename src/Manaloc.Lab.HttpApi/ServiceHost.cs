using System.Net;
using Manaloc.AspNetCore;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.ObjectPool;

namespace HttpApi;

/// <summary>
/// The service's whole life in one process: parse the command line, build the host in the chosen build (ASP.NET Core's
/// defaults, or Manaloc wired in: Kestrel's memory pool, object pools, a dedicated dispatcher with a share per client,
/// JSON written into pooled buffers), listen on 127.0.0.1, serve until stopped. One definition serves both hosts that
/// run it: samples/HttpApi's command line and the lab's child process (<c>child http serve -- …</c>).
/// </summary>
public static class ServiceHost
{
    /// <summary>The start of the first line the service prints, followed by its address; the lab reads the port from it.</summary>
    public const string ListeningPrefix = "HttpApi listening on ";

    /// <summary>
    /// The start of the line the Manaloc build prints after each idle release, followed by the releases run so far: the
    /// lab waits for it (a request to /stats would itself end the quiet the release waits for).
    /// </summary>
    public const string IdleReleasePrefix = "HttpApi idle release: ";

    /// <summary>The start of the last line the service prints once it has stopped, followed by the requests it served.</summary>
    public const string StoppedPrefix = "HttpApi stopped: ";

    /// <summary>Runs the service with <paramref name="args"/> (see <see cref="ServiceOptions.Help"/>) until it is stopped; returns the exit code.</summary>
    /// <exception cref="ArgumentException">An argument is unknown or out of range; the message names it.</exception>
    public static async Task<int> RunAsync(string[] args)
    {
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
        using var counters = new ServiceCounters(releases => Console.WriteLine(FormattableString.Invariant($"{IdleReleasePrefix}{releases}")));
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

        await using var app = builder.Build();
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
        Console.WriteLine($"{ListeningPrefix}{address} (build {options.BuildName})");
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
        if (allocations is not null) await File.WriteAllTextAsync(options.AllocationProfile!.Replace("{build}", options.BuildName, StringComparison.Ordinal), allocations.Report());
        Console.WriteLine($"{StoppedPrefix}{counters.Served} requests served");
        return 0;
    }
}
