using System.Buffers;
using Manaloc.Buffers;
using Microsoft.AspNetCore.Connections;

namespace Manaloc.AspNetCore.Kestrel;

/// <summary>
/// An <see cref="IMemoryPoolFactory{T}"/> that gives Kestrel (its socket transport, and anything else that asks
/// the container's factory) Manaloc's <see cref="BufferMemoryPool"/>s. Registered by
/// <see cref="ManalocServiceCollectionExtensions.AddManalocKestrelMemoryPool"/>.
/// </summary>
/// <remarks>
/// <para>Why: every connection's receive and send pipes rent 4 KiB blocks from this pool. Kestrel's own pool
/// keeps every block it ever rented and lets them go only by its own eviction; Manaloc's pools rent from a
/// buffer manager with per-thread caches, a cap on what they keep and trimming after gen-2 collections, and
/// they report rents, returns and what is outstanding (<see cref="GetStatistics"/>, and the package's meter).</para>
/// <para>Each <see cref="Create"/> makes a new pool (Kestrel makes one per transport, and disposes it when the
/// transport is disposed); the factory remembers them for the statistics. Thread safety: every member is safe
/// from any thread.</para>
/// </remarks>
public sealed class ManalocMemoryPoolFactory : IMemoryPoolFactory<byte>
{
    private readonly ManalocMemoryPoolOptions _options;
    private readonly List<BufferMemoryPool> _pools = [];
    private readonly Lock _lock = new();

    /// <summary>Creates a factory with the default options.</summary>
    public ManalocMemoryPoolFactory()
        : this(new ManalocMemoryPoolOptions())
    {
    }

    /// <summary>Creates a factory whose pools follow <paramref name="options"/> (copied now).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="options"/> is null.</exception>
    /// <exception cref="ArgumentException">A value is out of range; the message names it.</exception>
    public ManalocMemoryPoolFactory(ManalocMemoryPoolOptions options)
    {
        ManalocOptionsBinding.ThrowIfInvalid(options, ManalocMemoryPoolOptions.SectionName, static (o, section) => o.Problems(section));
        _options = new ManalocMemoryPoolOptions { BlockSize = options.BlockSize, Pinned = options.Pinned, Diagnostics = options.Diagnostics };
    }

    /// <summary>Creates a pool over a new <see cref="BufferMemoryPool"/> (in <see cref="Pools"/>) on which a rent of 0 bytes is a rent of one block, as Kestrel expects; named after <paramref name="options"/>' owner when there is one (<c>kestrel-1</c>, <c>kestrel-Sockets-2</c>, …).</summary>
    public MemoryPool<byte> Create(MemoryPoolOptions? options = null)
    {
        lock (_lock)
        {
            string owner = string.IsNullOrEmpty(options?.Owner) ? "" : options.Owner + "-";
            var pool = new BufferMemoryPool(new BufferMemoryPoolOptions
            {
                Name = $"kestrel-{owner}{_pools.Count + 1}",
                BlockSize = _options.BlockSize,
                Pinned = _options.Pinned,
                Diagnostics = _options.Diagnostics,
            });
            _pools.Add(pool);
            return new KestrelBlockPool(pool);
        }
    }

    /// <summary>The pools created so far, oldest first (disposed ones too).</summary>
    public IReadOnlyList<BufferMemoryPool> Pools
    {
        get
        {
            lock (_lock) return [.. _pools];
        }
    }

    /// <summary>The statistics of every pool created, added up.</summary>
    /// <remarks>Each pool's snapshot is taken on its own, so under load the sum is not from one instant.</remarks>
    public BufferMemoryPoolStatistics GetStatistics()
    {
        var total = default(BufferMemoryPoolStatistics);
        foreach (var pool in Pools) total += pool.GetStatistics();
        return total;
    }
}
