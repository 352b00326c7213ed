using Microsoft.Extensions.ObjectPool;

namespace HttpApi;

/// <summary>The pooled object per request: a set that finds duplicate SKUs in an order. Reset on return (IResettable).</summary>
public sealed class SkuSet : IResettable
{
    private readonly HashSet<string?> _seen = new(StringComparer.Ordinal);

    /// <summary>Adds a SKU: false when the set has it already.</summary>
    public bool Add(string? sku) => _seen.Add(sku!);

    /// <inheritdoc/>
    /// <remarks>A set grown by a huge order is not kept (it would hold its memory for every later request).</remarks>
    public bool TryReset()
    {
        bool keep = _seen.Count <= 1024;
        _seen.Clear();
        return keep;
    }
}
