namespace Manaloc.AspNetCore.ObjectPools;

/// <summary>
/// How <see cref="ManalocObjectPoolProvider"/> sizes the pools it creates; bound from the configuration
/// section <c>Manaloc:ObjectPools</c> by <see cref="ManalocServiceCollectionExtensions.AddManalocObjectPools"/>.
/// </summary>
/// <remarks>
/// <para>Why a class of its own rather than <see cref="Pooling.PoolOptions"/>: these settings apply to every
/// pool the provider creates (ASP.NET Core creates several), and they are validated on start with messages
/// that name the configuration key.</para>
/// <para>Thread safety: set it up before the provider reads it; the provider copies what it needs.</para>
/// </remarks>
public sealed class ManalocObjectPoolOptions
{
    /// <summary>The configuration section the options are bound from: <c>Manaloc:ObjectPools</c>.</summary>
    public const string SectionName = "Manaloc:ObjectPools";

    /// <summary>The cap on idle objects of one pool over all threads; null for Manaloc's default (at least 256, scaled with the processors).</summary>
    /// <remarks>The counterpart of <c>DefaultObjectPoolProvider.MaximumRetained</c>, which is twice the processor count:
    /// a per-thread pool needs more to keep each thread's stack useful.</remarks>
    public int? MaximumRetained { get; set; }

    /// <summary>The most idle objects one thread's stack holds before it spills a batch to the shared tier (1 to 1,048,576; default 64).</summary>
    public int LocalCapacity { get; set; } = 64;

    /// <summary>How many objects move between a thread's stack and the shared tier at once (1 to <see cref="LocalCapacity"/>; default 16).</summary>
    public int BatchSize { get; set; } = 16;

    /// <summary>Whether idle objects are released after gen-2 collections and under memory pressure (default true).</summary>
    public bool TrimAfterGen2 { get; set; } = true;

    /// <summary>The pool options for a pool of <paramref name="type"/>.</summary>
    internal Pooling.PoolOptions ToPoolOptions(Type type) => new()
    {
        Name = type.Name,
        MaxRetained = MaximumRetained,
        LocalCapacity = LocalCapacity,
        BatchSize = BatchSize,
        TrimAfterGen2 = TrimAfterGen2,
    };

    /// <summary>Every problem with these values, each naming its key under <paramref name="section"/>; empty when they are valid.</summary>
    internal List<string> Problems(string section)
    {
        var problems = new List<string>();
        if (LocalCapacity is < 1 or > 1 << 20)
            problems.Add($"{section}:{nameof(LocalCapacity)} must be between 1 and 1048576 (was {LocalCapacity}).");
        if (BatchSize < 1 || BatchSize > LocalCapacity)
            problems.Add($"{section}:{nameof(BatchSize)} must be between 1 and {section}:{nameof(LocalCapacity)} ({LocalCapacity}) (was {BatchSize}).");
        if (MaximumRetained is < 0)
            problems.Add($"{section}:{nameof(MaximumRetained)} must not be negative (was {MaximumRetained}).");
        return problems;
    }
}
