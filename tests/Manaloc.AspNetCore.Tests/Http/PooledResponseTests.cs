using System.Buffers;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization;
using Manaloc.AspNetCore.Http;
using Manaloc.Buffers;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;

namespace Manaloc.AspNetCore.Tests.Http;

/// <summary>
/// Answers from pooled writers on real Kestrel (127.0.0.1:0) under 16 concurrent clients: the leak a disposed writer causes,
/// made visible by poison, and <see cref="ManalocResults"/> sending every request its own body.
/// </summary>
public sealed class PooledResponseTests
{
    public static TheoryData<string> Shapes => [HandlerAwaits, FilterAwaits, OnStartingAwaits];

    private const string HandlerAwaits = "the handler awaits";
    private const string FilterAwaits = "a filter awaits after the handler";
    private const string OnStartingAwaits = "an OnStarting callback awaits";

    private static BufferManager PoisoningManager() => new(new BufferManagerOptions { Name = "responses", PoisonReturnedBuffers = true });

    /// <summary>Maps <paramref name="handler"/> at /answer/{id}, with what <paramref name="shape"/> adds between the handler and the body's write.</summary>
    private static Action<WebApplication> Endpoint(string shape, Func<int, Task<IResult>> handler) => app =>
    {
        var endpoint = app.MapGet("/answer/{id:int}", (int id, HttpContext context) =>
        {
            if (shape == OnStartingAwaits)
            {
                context.Response.OnStarting(async () =>
                {
                    await Task.Yield();
                    context.Response.Headers["X-Served-By"] = "test";
                });
            }
            return handler(id);
        });
        if (shape == FilterAwaits)
        {
            endpoint.AddEndpointFilter(async (context, next) =>
            {
                var result = await next(context);
                await Task.Yield(); // an audit log, a metric: anything asynchronous after the handler
                return result;
            });
        }
    };

    [Fact]
    public async Task A_writer_disposed_before_its_result_runs_shows_the_late_reader_poison()
    {
        using var manager = PoisoningManager();
        ResponseBodies.Tally tally;
        await using (var host = await TestHost.StartAsync(_ => { }, Endpoint(FilterAwaits, async id =>
        {
            using var writer = new PooledBufferWriter(manager); // the bug: disposed when the handler returns
            ResponseBodies.Write(writer, id);
            await Task.Yield();
            return Results.Bytes(writer.WrittenSequence.First, "application/octet-stream");
        })))
        {
            tally = await ResponseBodies.LoadAsync(host.Client);
        }
        // The filter's await runs after the writer's Dispose and before the body is copied: the late read sees the poison
        // (or, when another request rented the array in between, that request's bytes: the bug poison cannot hide). A late
        // read that races the poisoning itself sees poison then this request's tail, which may name no request ("other
        // bytes"): one more face of the same bug, so only failed requests would mean something else went wrong.
        Assert.True(tally.Wrong > 0 && tally.Poisoned > 0, tally.ToString());
        Assert.True(tally.Failed == 0, tally.ToString());
    }

    [Theory]
    [MemberData(nameof(Shapes))]
    public async Task ManalocResults_Bytes_sends_every_request_its_own_body(string shape)
    {
        using var manager = PoisoningManager();
        ResponseBodies.Tally tally;
        await using (var host = await TestHost.StartAsync(_ => { }, Endpoint(shape, async id =>
        {
            var writer = new PooledBufferWriter(manager); // no using: the result owns it
            ResponseBodies.Write(writer, id);
            await Task.Yield();
            return ManalocResults.Bytes(writer);
        })))
        {
            tally = await ResponseBodies.LoadAsync(host.Client);
        }
        Assert.True(tally.Right == ResponseBodies.Total, tally.ToString());
        Assert.Equal(0, manager.GetStatistics().RentedBytes); // every writer disposed once its response was written
    }

    [Theory]
    [MemberData(nameof(Shapes))]
    public async Task ManalocResults_Json_sends_every_request_its_own_document(string shape)
    {
        using var manager = PoisoningManager();
        ResponseBodies.Tally tally;
        await using (var host = await TestHost.StartAsync(_ => { }, Endpoint(shape, async id =>
        {
            await Task.Yield();
            return ManalocResults.Json(Reply.For(id), ResultsJson.Default.Reply, manager: manager);
        })))
        {
            tally = await ResponseBodies.LoadAsync(host.Client, id => JsonSerializer.SerializeToUtf8Bytes(Reply.For(id), ResultsJson.Default.Reply));
        }
        Assert.True(tally.Right == ResponseBodies.Total, tally.ToString());
        Assert.Equal(0, manager.GetStatistics().RentedBytes);
    }

    [Fact]
    public async Task A_client_that_goes_away_mid_body_leaves_nothing_rented()
    {
        using var manager = PoisoningManager();
        var finished = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using (var host = await TestHost.StartAsync(_ => { }, app =>
        {
            app.Use(async (context, next) =>
            {
                try
                {
                    await next(context);
                }
                finally
                {
                    finished.TrySetResult();
                }
            });
            app.MapGet("/large", () =>
            {
                var writer = new PooledBufferWriter(manager);
                writer.Write(new byte[8 << 20]); // far more than Kestrel buffers for a client that does not read
                return ManalocResults.Bytes(writer);
            });
        }))
        {
            using (var socket = new Socket(SocketType.Stream, ProtocolType.Tcp))
            {
                await socket.ConnectAsync(IPAddress.Loopback, host.Address.Port);
                await socket.SendAsync("GET /large HTTP/1.1\r\nHost: x\r\n\r\n"u8.ToArray());
                var start = new byte[4096];
                Assert.True(await socket.ReceiveAsync(start) > 0); // the response has started
            } // gone, the body mostly unsent
            await finished.Task.WaitAsync(TimeSpan.FromMinutes(1)); // a hang guard, not a timing
        }
        Assert.Equal(0, manager.GetStatistics().RentedBytes);
    }
}

/// <summary>A small document whose bytes name its request.</summary>
public sealed record Reply(int Id, string Text)
{
    public static Reply For(int id) => new(id, $"request {id:D6} " + new string('x', 200));
}

[JsonSourceGenerationOptions(JsonSerializerDefaults.Web)]
[JsonSerializable(typeof(Reply))]
internal sealed partial class ResultsJson : JsonSerializerContext;

/// <summary>Bodies that name their request, a concurrent load that checks each one, and what a wrong one was.</summary>
internal static class ResponseBodies
{
    public const int Clients = 16;
    public const int RequestsPerClient = 100;
    public const int Total = Clients * RequestsPerClient;

    /// <summary>The body of request <paramref name="id"/>: <c>request 000042;</c> repeated up to 1,000 bytes.</summary>
    public static byte[] Expected(int id)
    {
        var unit = Encoding.ASCII.GetBytes($"request {id:D6};");
        var body = new byte[1000];
        for (int i = 0; i < body.Length; i++) body[i] = unit[i % unit.Length];
        return body;
    }

    public static void Write(IBufferWriter<byte> writer, int id) => writer.Write(Expected(id));

    /// <summary><see cref="Clients"/> clients at once, each sending its requests one after another to /answer/{id}; every body checked.</summary>
    public static async Task<Tally> LoadAsync(HttpClient client, Func<int, byte[]>? expected = null)
    {
        expected ??= Expected;
        var tally = new Tally();
        await Task.WhenAll(Enumerable.Range(0, Clients).Select(c => Task.Run(async () =>
        {
            for (int r = 0; r < RequestsPerClient; r++)
            {
                int id = c * RequestsPerClient + r;
                using var response = await client.GetAsync($"/answer/{id}");
                var body = await response.Content.ReadAsByteArrayAsync();
                tally.Add(response.StatusCode, body, expected(id));
            }
        })));
        return tally;
    }

    public sealed class Tally
    {
        private int _right, _foreign, _poisoned, _other, _failed;

        public int Right => _right;
        public int Poisoned => _poisoned;
        public int Other => _other;
        public int Failed => _failed;
        public int Wrong => _foreign + _poisoned + _other + _failed;

        public void Add(HttpStatusCode status, byte[] body, byte[] expected)
        {
            var span = body.AsSpan();
            if (status != HttpStatusCode.OK) Interlocked.Increment(ref _failed);
            else if (span.SequenceEqual(expected)) Interlocked.Increment(ref _right);
            else if (span.Length > 0 && span.IndexOfAnyExcept(BufferManagerOptions.PoisonByte) < 0) Interlocked.Increment(ref _poisoned);
            else if (span.IndexOf("request "u8) >= 0) Interlocked.Increment(ref _foreign);
            else Interlocked.Increment(ref _other);
        }

        public override string ToString()
            => $"{Right} right, {Wrong} wrong: {_foreign} other requests' bodies, {Poisoned} poisoned, {Other} other bytes, {Failed} failed";
    }
}
