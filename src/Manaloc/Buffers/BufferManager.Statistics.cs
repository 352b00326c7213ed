using Manaloc.Pooling;

namespace Manaloc.Buffers;

public sealed partial class BufferManager
{
    /// <summary>The counters of every size class added up.</summary>
    /// <remarks>Approximate while threads are busy (read without stopping them). Thread safety: safe from any thread.</remarks>
    public PoolStatistics GetStatistics()
    {
        var total = default(PoolStatistics);
        foreach (var pool in _classes) total += pool.GetStatistics();
        return total;
    }

    /// <summary>The counters of the size class that serves <paramref name="size"/>-byte rents.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="size"/> is not between 1 and <see cref="MaxBufferSize"/>.</exception>
    public PoolStatistics GetStatistics(int size)
    {
        int index = SelectClass(size);
        if (size < 1 || (uint)index >= (uint)_classes.Length)
            PoolThrowHelper.ThrowArgumentOutOfRange(nameof(size), size, $"The size must be between 1 and {MaxBufferSize}.");
        return _classes[index].GetStatistics();
    }

    /// <summary>Drops idle buffers of every class (each thread's own stack the next time that thread returns a buffer).</summary>
    /// <remarks>Thread safety: safe from any thread.</remarks>
    public void Trim()
    {
        foreach (var pool in _classes) pool.Trim();
    }

    /// <summary>Stops pooling: idle buffers are dropped, later returns are ignored, later rents of pooled sizes throw <see cref="ObjectDisposedException"/>.</summary>
    /// <remarks>Idempotent. Do not dispose <see cref="Default"/>. Thread safety: safe from any thread.</remarks>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0) return; // first caller only
        foreach (var pool in _classes) pool.Dispose();
        PoolMetrics.Unregister(this);
    }
}
