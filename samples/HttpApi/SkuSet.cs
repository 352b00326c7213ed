using Microsoft.Extensions.ObjectPool;

namespace HttpApi;

/// <summary>The pooled object per request: a set that finds duplicate SKUs in an order. Reset on return (IResettable).</summary>
public sealed class SkuSet : IResettable
{
    private readonly HashSet<string> _seen = new(StringComparer.Ordinal);

    /// <summary>Counts the order's SKUs that appear more than once.</summary>
    public int CountDuplicates(Order order)
    {
        int duplicates = 0;
        foreach (var line in order.Lines)
        {
            if (!_seen.Add(line.Sku)) duplicates++;
        }
        return duplicates;
    }

    /// <inheritdoc/>
    /// <remarks>A set grown by a huge order is not kept (it would hold its memory for every later request).</remarks>
    public bool TryReset()
    {
        bool keep = _seen.Count <= 1024;
        _seen.Clear();
        return keep;
    }
}
