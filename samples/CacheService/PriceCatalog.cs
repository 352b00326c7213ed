using System.Collections.Concurrent;

namespace CacheService;

/// <summary>A price as the service answers it: <see cref="Revision"/> says which change of the catalog it reflects.</summary>
public sealed record Quote(string Sku, decimal Price, int Revision);

/// <summary>
/// The slow source the cache stands in front of (a database in a real service): each load is counted, so a test can tell
/// a cached answer from a fresh one.
/// </summary>
public sealed class PriceCatalog
{
    private readonly ConcurrentDictionary<string, int> _revisions = new(StringComparer.Ordinal);
    private int _loads;

    /// <summary>How many times a quote was loaded from the catalog rather than answered from a cache.</summary>
    public int Loads => Volatile.Read(ref _loads);

    /// <summary>Loads the current quote of <paramref name="sku"/>: its price follows from the SKU and the revision.</summary>
    public async ValueTask<Quote> LoadAsync(string sku, CancellationToken cancellationToken)
    {
        await Task.Yield(); // a real source is asynchronous
        cancellationToken.ThrowIfCancellationRequested();
        Interlocked.Increment(ref _loads);
        int revision = _revisions.GetOrAdd(sku, 1);
        decimal price = 10m + sku.Sum(c => c % 10) + revision * 0.25m;
        return new Quote(sku, price, revision);
    }

    /// <summary>Changes the price of <paramref name="sku"/> (a new revision); returns that revision.</summary>
    public int Reprice(string sku) => _revisions.AddOrUpdate(sku, 2, static (_, revision) => revision + 1);
}
