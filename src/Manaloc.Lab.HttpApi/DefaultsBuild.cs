using System.Buffers;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using Microsoft.Extensions.ObjectPool;

namespace HttpApi;

/// <summary>
/// The endpoints as a service without Manaloc has them: the shape both builds share (<see cref="Endpoints"/>), with
/// Microsoft.Extensions.ObjectPool's pool, the CPU-bound work run inline on the ThreadPool thread that serves the request,
/// and the answer serialized into an <see cref="ArrayBufferWriter{T}"/> made per request.
/// </summary>
public static class DefaultsBuild
{
    public static void MapEndpoints(WebApplication app, ServiceOptions options)
    {
        var sets = app.Services.GetRequiredService<ObjectPool<SkuSet>>();
        app.MapPost("/api/orders", context => WriteOrderAsync(context, sets));
        app.MapGet("/api/primes/{n:int}", static context =>
        {
            if (Endpoints.PrimeLimit(context) is not { } n)
            {
                context.Response.StatusCode = StatusCodes.Status400BadRequest;
                return Task.CompletedTask;
            }
            WriteJson(context, Work.CountPrimes(n), ApiJson.Default.PrimeCount);
            return Task.CompletedTask;
        });
    }

    private static async Task WriteOrderAsync(HttpContext context, ObjectPool<SkuSet> sets)
    {
        if (await Endpoints.ReadValidOrderAsync(context, sets) is not { } order) return;
        WriteJson(context, Work.Summarize(order), ApiJson.Default.OrderSummary);
    }

    private static void WriteJson<T>(HttpContext context, T value, JsonTypeInfo<T> info)
    {
        var buffer = new ArrayBufferWriter<byte>();
        using (var json = new Utf8JsonWriter(buffer)) JsonSerializer.Serialize(json, value, info);
        Endpoints.Respond(context, new ReadOnlySequence<byte>(buffer.WrittenMemory));
    }
}
