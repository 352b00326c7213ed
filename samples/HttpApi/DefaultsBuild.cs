using Microsoft.Extensions.ObjectPool;

namespace HttpApi;

/// <summary>The endpoints as ASP.NET Core's defaults have them.</summary>
public static class DefaultsBuild
{
    public static void MapEndpoints(WebApplication app, ServiceOptions options)
    {
        app.MapPost("/api/orders", (Order order, ObjectPool<SkuSet> sets) =>
        {
            var set = sets.Get();
            try
            {
                int duplicates = set.CountDuplicates(order);
                return duplicates == 0 ? Results.Ok(Work.Summarize(order)) : Results.BadRequest($"{duplicates} duplicate SKUs");
            }
            finally
            {
                sets.Return(set);
            }
        });
        app.MapGet("/api/primes/{n:int}", (int n) => n is < 1 or > 1_000_000 ? Results.BadRequest("n must be 1 to 1000000") : Results.Ok(Work.CountPrimes(n)));
    }
}
