using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using Manaloc.AspNetCore;
using Manaloc.AspNetCore.Dispatching;
using Manaloc.Buffers;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.Extensions.ObjectPool;

namespace HttpApi;

/// <summary>The endpoints with Manaloc wired in: Kestrel's pool, object pools, the dispatcher, the idle release, orders read into pooled forms, JSON into pooled buffers.</summary>
public static class ManalocBuild
{
    /// <summary>The dispatcher's name (its key in DI and its configuration section).</summary>
    public const string DispatcherName = "cpu";

    public static void AddServices(IServiceCollection services, ServiceOptions options)
    {
        services.AddManalocKestrelMemoryPool();
        services.AddManalocObjectPools();
        services.AddDedicatedDispatcher(DispatcherName, o =>
        {
            o.ThreadCount = options.DispatcherThreads;
            o.ClientShare = options.ClientShare;
            // Every load client connects from 127.0.0.1: the client is named by a header here. A real service keys on
            // an API key or the user (a header alone can be forged).
            o.ClientKey = static context => context.Request.Headers["X-Client"].ToString();
        });
        if (options.IdleReleaseSeconds > 0) services.AddManalocIdleRelease(o => o.QuietAfter = TimeSpan.FromSeconds(options.IdleReleaseSeconds));
    }

    /// <summary>Maps the endpoints in the shape both builds share (<see cref="Endpoints"/>), over Manaloc's pools and dispatcher.</summary>
    public static void MapEndpoints(WebApplication app, ServiceOptions options)
    {
        var sets = app.Services.GetRequiredService<ObjectPool<SkuSet>>();
        var outputs = app.Services.GetRequiredService<ObjectPool<JsonOutput>>();
        var forms = new OrderForms(app.Services.GetRequiredService<ObjectPool<OrderForm>>(), app.Services.GetRequiredService<ObjectPool<OrderLineForm>>());
        var cpu = app.Services.GetRequiredKeyedService<HostedDispatcher>(DispatcherName);
        app.MapPost("/api/orders", context => WriteOrderAsync(context, sets, forms, outputs));
        app.MapGet("/api/primes/{n:int}", context => CountPrimesAsync(context, cpu, outputs));
    }

    /// <summary>Counts primes on the dispatcher (no closure: the limit is the state) and writes the answer with a pooled writer.</summary>
    private static async Task CountPrimesAsync(HttpContext context, HostedDispatcher cpu, ObjectPool<JsonOutput> outputs)
    {
        if (Endpoints.PrimeLimit(context) is not { } n)
        {
            context.Response.StatusCode = StatusCodes.Status400BadRequest;
            return;
        }
        var result = await cpu.RunAsync(context, n, static limit => Work.CountPrimes(limit));
        if (result is Ok<PrimeCount> { Value: { } count }) WriteJson(context, count, ApiJson.Default.PrimeCount, outputs);
        else await result.ExecuteAsync(context); // 429 or 503: a status code and Retry-After, nothing from the container
    }

    /// <summary>
    /// Reads the order in place (from Manaloc's pool's segments in this build) into a pooled form, then writes the summary
    /// with a pooled Utf8JsonWriter into a pooled buffer writer.
    /// </summary>
    private static async Task WriteOrderAsync(HttpContext context, ObjectPool<SkuSet> sets, OrderForms forms, ObjectPool<JsonOutput> outputs)
    {
        if (await Endpoints.ReadValidOrderAsync(context, sets, forms) is not { } order) return;
        try
        {
            WriteJson(context, Work.Summarize(order), ApiJson.Default.OrderSummary, outputs);
        }
        finally
        {
            forms.Return(order);
        }
    }

    /// <summary>Serializes <paramref name="value"/> with a pooled writer and copies it into the response.</summary>
    private static void WriteJson<T>(HttpContext context, T value, JsonTypeInfo<T> info, ObjectPool<JsonOutput> outputs)
    {
        var output = outputs.Get();
        try
        {
            JsonSerializer.Serialize(output.Json, value, info);
            output.Json.Flush();
            Endpoints.Respond(context, output.Buffer.WrittenSequence);
        }
        finally
        {
            outputs.Return(output);
        }
    }
}

/// <summary>A pooled JSON writer over a pooled buffer writer, reset on return.</summary>
public sealed class JsonOutput : IResettable, IDisposable
{
    public JsonOutput()
    {
        Buffer = new PooledBufferWriter();
        Json = new Utf8JsonWriter(Buffer);
    }

    public PooledBufferWriter Buffer { get; }

    public Utf8JsonWriter Json { get; }

    /// <inheritdoc/>
    public bool TryReset()
    {
        Buffer.Reset();
        Json.Reset(Buffer);
        return true;
    }

    /// <summary>Gives the buffer's segments back (the pool disposes what it drops).</summary>
    public void Dispose()
    {
        Json.Dispose();
        Buffer.Dispose();
    }
}
