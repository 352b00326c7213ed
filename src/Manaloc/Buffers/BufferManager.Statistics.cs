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
        return AddHot(total, -1);
    }

    /// <summary>The counters of the size class that serves <paramref name="size"/>-byte rents.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="size"/> is not between 1 and <see cref="MaxBufferSize"/>.</exception>
    public PoolStatistics GetStatistics(int size)
    {
        int index = SelectClass(size);
        if (size < 1 || (uint)index >= (uint)_classes.Length)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(size), size, $"The size must be between 1 and {MaxBufferSize}.");
        return AddHot(_classes[index].GetStatistics(), index);
    }

    /// <summary>Drops idle buffers of every class (each thread's own stack the next time that thread returns a buffer).</summary>
    /// <remarks>Thread safety: safe from any thread.</remarks>
    public void Trim()
    {
        long hot = TrimHot(idleOnly: false);
        if (hot > 0) Diagnostics.ManalocEventSource.Log.PoolTrimmed(Name, hot, "requested: hot buffers");
        foreach (var pool in _classes) pool.Trim();
    }

    /// <summary>Stops pooling: idle buffers are dropped, later returns are ignored, later rents of pooled sizes throw <see cref="ObjectDisposedException"/>.</summary>
    /// <remarks>Idempotent; does nothing on <see cref="Shared"/>. Thread safety: safe from any thread.</remarks>
    public void Dispose()
    {
        if (_isShared) return; // the process-wide manager: code that disposes it by mistake must not break every other user
        if (Interlocked.Exchange(ref _disposed, 1) != 0) return; // first caller only; the fast paths read the flag
        TrimHot(idleOnly: false);
        foreach (var pool in _classes) pool.Dispose();
        PoolMetrics.Unregister(this);
        _lease.Release();
    }
}
