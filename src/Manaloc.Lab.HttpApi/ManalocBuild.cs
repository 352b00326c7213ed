using Manaloc.AspNetCore;
using Manaloc.AspNetCore.Dispatching;
using Manaloc.AspNetCore.Http;
using Manaloc.Buffers;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.Extensions.ObjectPool;

namespace HttpApi;

/// <summary>The endpoints with Manaloc wired in: Kestrel's pool, object pools, the dispatcher, the idle release, orders read into pooled forms, JSON into pooled buffers.</summary>
public static class ManalocBuild
{
    /// <summary>The dispatcher's name (its key in DI and its configuration section).</summary>
    public const string DispatcherName = "cpu";

    /// <summary>
    /// Debug builds poison every buffer given back (the answers' manager and Kestrel's pools, through its diagnostic mode), so
    /// a response that reads pooled memory after its owner let it go shows 0xDD bytes, not another request's data.
    /// </summary>
#if DEBUG
    public static readonly bool PoisonBuffers = true;
#else
    public static readonly bool PoisonBuffers = false;
#endif

    public static void AddServices(IServiceCollection services, ServiceOptions options)
    {
        services.AddManalocKestrelMemoryPool(o => o.Diagnostics |= PoisonBuffers);
        // The answers' JSON buffers (disposed with the container).
        services.AddSingleton(new BufferManager(new BufferManagerOptions { Name = "answers", PoisonReturnedBuffers = PoisonBuffers }));
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
        var answers = app.Services.GetRequiredService<BufferManager>();
        var forms = new OrderForms(app.Services.GetRequiredService<ObjectPool<OrderForm>>(), app.Services.GetRequiredService<ObjectPool<OrderLineForm>>());
        var cpu = app.Services.GetRequiredKeyedService<HostedDispatcher>(DispatcherName);
        app.MapPost("/api/orders", context => WriteOrderAsync(context, sets, forms, answers));
        app.MapGet("/api/primes/{n:int}", context => CountPrimesAsync(context, cpu, answers));
    }

    /// <summary>Counts primes on the dispatcher (no closure: the limit is the state) and writes the answer from pooled buffers.</summary>
    private static async Task CountPrimesAsync(HttpContext context, HostedDispatcher cpu, BufferManager answers)
    {
        if (Endpoints.PrimeLimit(context) is not { } n)
        {
            context.Response.StatusCode = StatusCodes.Status400BadRequest;
            return;
        }
        var result = await cpu.RunAsync(context, n, static limit => Work.CountPrimes(limit));
        if (result is Ok<PrimeCount> { Value: { } count }) await ManalocResults.Json(count, ApiJson.Default.PrimeCount, manager: answers).ExecuteAsync(context);
        else await result.ExecuteAsync(context); // 429 or 503: a status code and Retry-After, nothing from the container
    }

    /// <summary>
    /// Reads the order in place (from Manaloc's pool's segments in this build) into a pooled form, then answers with the summary
    /// serialized into pooled buffers, which go back once the body is flushed (the form goes back at once: the result holds bytes).
    /// </summary>
    private static async Task WriteOrderAsync(HttpContext context, ObjectPool<SkuSet> sets, OrderForms forms, BufferManager answers)
    {
        if (await Endpoints.ReadValidOrderAsync(context, sets, forms) is not { } order) return;
        PooledBufferResult answer;
        try
        {
            answer = ManalocResults.Json(Work.Summarize(order), ApiJson.Default.OrderSummary, manager: answers);
        }
        finally
        {
            forms.Return(order);
        }
        await answer.ExecuteAsync(context);
    }
}
