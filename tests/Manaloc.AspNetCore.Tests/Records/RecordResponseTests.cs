using System.Net;
using System.Text.Json;
using System.Text.Json.Serialization;
using Manaloc.Memory;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;

namespace Manaloc.AspNetCore.Tests.Records;

[NativeRecord]
public interface IProduct
{
    long Id { get; set; }
    int Stock { get; set; }
    double Price { get; set; }
}

[JsonSerializable(typeof(IProduct))]
internal sealed partial class ProductJsonContext : JsonSerializerContext;

/// <summary>[NativeRecord] records answered by endpoints on real Kestrel: written as their interface, under reflection and
/// under a source-generated context; a dead record fails the request instead of answering <c>{}</c>; concurrent requests
/// moving the catalog's own view each get their own product.</summary>
public sealed class RecordResponseTests : IDisposable
{
    private const int Products = 1000;
    private readonly TypeAllocator _allocator = new(new TypeAllocatorOptions { Name = "catalog" });
    private readonly RecordArray<IProduct> _catalog;

    public RecordResponseTests()
    {
        _catalog = _allocator.NewArray<IProduct>(Products);
        for (int i = 0; i < Products; i++)
        {
            var p = _catalog.MoveTo(i);
            p.Id = i;
            p.Stock = i % 7;
            p.Price = i + 0.5;
        }
    }

    public void Dispose() => _allocator.Dispose();

    private void Endpoints(WebApplication app)
    {
        app.MapGet("/product/{id:int}", IProduct (int id) => _catalog[id]);
        app.MapGet("/object/{id:int}", (int id) => Results.Json((object)_catalog[id]));
        app.MapGet("/view/{id:int}", (int id) =>
        {
            var product = _catalog.MoveTo(id);
            Thread.SpinWait(200); // room for another request to move a shared view
            return Results.Json((object)product);
        });
    }

    private static void AssertProduct(int id, string json)
    {
        using var document = JsonDocument.Parse(json);
        var root = document.RootElement;
        Assert.Equal(id, root.GetProperty("id").GetInt64());
        Assert.Equal(id % 7, root.GetProperty("stock").GetInt32());
        Assert.Equal(id + 0.5, root.GetProperty("price").GetDouble());
    }

    [Fact]
    public async Task An_endpoint_returning_a_record_as_its_interface_or_as_object_writes_its_data()
    {
        await using var host = await TestHost.StartAsync(_ => { }, Endpoints);
        AssertProduct(12, await host.Client.GetStringAsync("/product/12"));
        AssertProduct(13, await host.Client.GetStringAsync("/object/13"));
        AssertProduct(14, await host.Client.GetStringAsync("/view/14"));
    }

    [Fact]
    public async Task Under_a_source_generated_context_alone_an_endpoint_writes_the_records_data()
    {
        await using var host = await TestHost.StartAsync(s => s.ConfigureHttpJsonOptions(o =>
        {
            // As under NativeAOT: no reflection resolver, the application's context and the records' resolver.
            o.SerializerOptions.TypeInfoResolverChain.Clear();
            o.SerializerOptions.TypeInfoResolverChain.Add(ProductJsonContext.Default);
            o.SerializerOptions.TypeInfoResolverChain.Add(NativeRecordJson.TypeInfoResolver);
        }), Endpoints);
        AssertProduct(21, await host.Client.GetStringAsync("/product/21"));
        AssertProduct(22, await host.Client.GetStringAsync("/object/22"));
        AssertProduct(23, await host.Client.GetStringAsync("/view/23"));
    }

    [Fact]
    public async Task A_record_of_a_disposed_array_fails_the_request_instead_of_answering_empty()
    {
        var old = _allocator.NewArray<IProduct>(4);
        old.MoveTo(2).Id = 2;
        var item = old[2];
        old.Dispose();
        Exception? thrown = null;
        await using var host = await TestHost.StartAsync(_ => { }, app =>
        {
            app.Use(async (context, next) =>
            {
                try
                {
                    await next(context);
                }
                catch (Exception e)
                {
                    thrown = e;
                    throw;
                }
            });
            app.MapGet("/stale", () => Results.Json((object)item));
        });
        using var response = await host.Client.GetAsync("/stale");
        string body = await response.Content.ReadAsStringAsync();
        Assert.NotEqual("{}", body);
        Assert.Equal(HttpStatusCode.InternalServerError, response.StatusCode);
        var disposed = Assert.IsType<ObjectDisposedException>(thrown);
        Assert.Contains("RecordArray<IProduct>", disposed.Message);
    }

    [Fact]
    public async Task Concurrent_requests_moving_the_catalogs_view_each_get_their_own_product()
    {
        await using var host = await TestHost.StartAsync(_ => { }, Endpoints);
        int wrong = 0;
        await Parallel.ForEachAsync(Enumerable.Range(0, 3000), new ParallelOptions { MaxDegreeOfParallelism = 16 }, async (i, token) =>
        {
            int id = i * 7919 % Products;
            using var document = JsonDocument.Parse(await host.Client.GetStringAsync($"/view/{id}", token));
            if (document.RootElement.GetProperty("id").GetInt64() != id) Interlocked.Increment(ref wrong);
        });
        Assert.Equal(0, wrong);
    }
}
