using System.Net;
using Manaloc.AspNetCore.Kestrel;
using Manaloc.Buffers;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;

namespace Manaloc.AspNetCore.Tests.Kestrel;

/// <summary>Kestrel's socket transport rents from Manaloc's pool: real Kestrel on 127.0.0.1:0, real HTTP requests.</summary>
public sealed class ManalocMemoryPoolFactoryTests
{
    private static void Echo(WebApplication app) => app.MapPost("/echo", async (HttpContext context) =>
    {
        using var body = new MemoryStream();
        await context.Request.Body.CopyToAsync(body);
        return Results.Bytes(body.ToArray(), "application/octet-stream");
    });

    [Fact]
    public async Task Kestrel_rents_from_manalocs_pool_and_returns_everything_after_shutdown()
    {
        ManalocMemoryPoolFactory factory;
        var payload = new byte[64 * 1024];
        new Random(7).NextBytes(payload);
        await using (var host = await TestHost.StartAsync(s => s.AddManalocKestrelMemoryPool(), Echo))
        {
            factory = host.Services.GetRequiredService<ManalocMemoryPoolFactory>();
            Assert.Same(factory, host.Services.GetRequiredService<IMemoryPoolFactory<byte>>());
            long before = factory.GetStatistics().Rents;
            for (int i = 0; i < 20; i++)
            {
                using var response = await host.Client.PostAsync("/echo", new ByteArrayContent(payload));
                Assert.Equal(HttpStatusCode.OK, response.StatusCode);
                Assert.Equal(payload, await response.Content.ReadAsByteArrayAsync());
            }
            var during = factory.GetStatistics();
            // 20 requests of 64 KiB in and out through 4 KiB blocks: hundreds of rents.
            Assert.True(during.Rents - before >= 20 * 2 * payload.Length / 4096 / 2, during.ToString());
            Assert.NotEmpty(factory.Pools);
            Assert.All(factory.Pools, p => Assert.StartsWith("kestrel-", p.Name));
        }
        var after = factory.GetStatistics();
        Assert.Equal(0, after.Outstanding);
        Assert.Equal(after.Rents, after.Returns);
    }

    [Fact]
    public async Task A_connection_that_closes_mid_request_gives_its_buffers_back()
    {
        ManalocMemoryPoolFactory factory;
        await using (var host = await TestHost.StartAsync(s => s.AddManalocKestrelMemoryPool(), Echo))
        {
            factory = host.Services.GetRequiredService<ManalocMemoryPoolFactory>();
            using (var socket = new System.Net.Sockets.Socket(System.Net.Sockets.SocketType.Stream, System.Net.Sockets.ProtocolType.Tcp))
            {
                await socket.ConnectAsync(IPAddress.Loopback, host.Address.Port);
                await socket.SendAsync("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"u8.ToArray());
                await socket.SendAsync(new byte[10_000]); // then the client goes away
            }
            using var response = await host.Client.PostAsync("/echo", new ByteArrayContent([1, 2, 3]));
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        }
        Assert.Equal(0, factory.GetStatistics().Outstanding);
    }

    [Fact]
    public void Pools_are_named_after_their_owner_and_follow_the_options()
    {
        var factory = new ManalocMemoryPoolFactory(new ManalocMemoryPoolOptions { BlockSize = 8192, Pinned = false });
        using var first = factory.Create(new MemoryPoolOptions { Owner = "Sockets" });
        using var second = factory.Create();
        Assert.Equal("kestrel-Sockets-1", factory.Pools[0].Name);
        Assert.Equal("kestrel-2", factory.Pools[1].Name);
        using (var block = first.Rent())
        {
            Assert.Equal(8192, block.Memory.Length);
        }
        var stats = factory.GetStatistics();
        Assert.Equal((1L, 1L, 0L, 0L), (stats.Rents, stats.Returns, stats.Outstanding, stats.RentedBytes));
        Assert.Equal(factory.Pools[0].GetStatistics() + factory.Pools[1].GetStatistics(), stats);
    }

    [Fact]
    public void A_rent_of_zero_bytes_is_a_block_as_kestrel_expects()
    {
        using var pool = new ManalocMemoryPoolFactory().Create();
        using var block = pool.Rent(0);
        Assert.Equal(4096, block.Memory.Length);
    }

    /// <summary>Kestrel's response writer asks the pool for 0 bytes when it needs a block (an empty block made it throw).</summary>
    [Fact]
    public async Task A_response_written_through_the_body_writer_with_a_content_length_is_served()
    {
        await using var host = await TestHost.StartAsync(s => s.AddManalocKestrelMemoryPool(), app => app.MapGet("/raw", async (HttpContext context) =>
        {
            byte[] body = "{\"ok\":true}"u8.ToArray();
            context.Response.ContentLength = body.Length;
            System.Buffers.BuffersExtensions.Write(context.Response.BodyWriter, body);
            await context.Response.BodyWriter.FlushAsync();
        }));
        Assert.Equal("{\"ok\":true}", await host.Client.GetStringAsync("/raw"));
    }

    [Fact]
    public void A_bad_block_size_is_refused_naming_the_key()
    {
        var e = Assert.Throws<ArgumentException>(() => new ManalocMemoryPoolFactory(new ManalocMemoryPoolOptions { BlockSize = 3000 }));
        Assert.Contains("Manaloc:MemoryPool:BlockSize must be a power of two", e.Message);
    }
}
