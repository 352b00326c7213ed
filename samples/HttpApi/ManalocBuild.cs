using System.Buffers;
using System.Text.Json;
using Manaloc.AspNetCore;
using Manaloc.AspNetCore.Dispatching;
using Manaloc.Buffers;
using Microsoft.Extensions.ObjectPool;

namespace HttpApi;

/// <summary>The endpoints with Manaloc wired in: Kestrel's pool, object pools, the dispatcher, JSON into pooled buffers.</summary>
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
    }

    public static void MapEndpoints(WebApplication app, ServiceOptions options)
    {
        app.MapPost("/api/orders", WriteOrderAsync);
        app.MapGet("/api/primes/{n:int}", (int n, HttpContext context, [FromKeyedServices(DispatcherName)] HostedDispatcher cpu)
            => n is < 1 or > 1_000_000 ? Task.FromResult(Results.BadRequest("n must be 1 to 1000000")) : cpu.RunAsync(context, () => Work.CountPrimes(n)));
    }

    /// <summary>Reads the order, and writes the summary with a pooled Utf8JsonWriter into a pooled buffer writer, then to the response.</summary>
    private static async Task WriteOrderAsync(HttpContext context, ObjectPool<SkuSet> sets, ObjectPool<JsonOutput> outputs)
    {
        var order = await context.Request.ReadFromJsonAsync(ApiJson.Default.Order, context.RequestAborted);
        if (order is null)
        {
            context.Response.StatusCode = StatusCodes.Status400BadRequest;
            return;
        }
        var set = sets.Get();
        int duplicates;
        try
        {
            duplicates = set.CountDuplicates(order);
        }
        finally
        {
            sets.Return(set);
        }
        if (duplicates > 0)
        {
            context.Response.StatusCode = StatusCodes.Status400BadRequest;
            return;
        }
        var output = outputs.Get();
        try
        {
            JsonSerializer.Serialize(output.Json, Work.Summarize(order), ApiJson.Default.OrderSummary);
            output.Json.Flush();
            context.Response.ContentType = "application/json; charset=utf-8";
            context.Response.ContentLength = output.Buffer.WrittenCount;
            foreach (var segment in output.Buffer.WrittenSequence) context.Response.BodyWriter.Write(segment.Span);
            await context.Response.BodyWriter.FlushAsync(context.RequestAborted);
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
