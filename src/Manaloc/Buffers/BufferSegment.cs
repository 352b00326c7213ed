using System.Buffers;

namespace Manaloc.Buffers;

/// <summary>
/// One array of a <see cref="SegmentChain"/>, linked for <see cref="ReadOnlySequence{T}"/>. Nodes are cached per
/// thread (up to <see cref="CacheSize"/>), so a writer or stream that grows allocates no node after warm-up.
/// </summary>
/// <remarks>
/// <para>Why a plain per-thread array and not a pool with a shared tier: a node is a small object that holds no
/// buffer while cached, so one lost to another thread (a stream disposed where it was not created) costs the GC
/// 64 bytes, not a lock; and a writer's or stream's nodes are almost always taken and given back by one thread.
/// The arrays, which matter, go through the buffer manager.</para>
/// <para>Not thread-safe: a node belongs to one chain between its Rent and its Return; the cache is the thread's own.</para>
/// </remarks>
internal sealed class BufferSegment : ReadOnlySequenceSegment<byte>
{
    /// <summary>Nodes a thread keeps: enough for a 30 MiB chain (4 KiB doubling to 1 MiB, then 1 MiB each).</summary>
    private const int CacheSize = 40;

    [ThreadStatic]
    private static BufferSegment?[]? t_cache;

    [ThreadStatic]
    private static int t_count;

    /// <summary>The rented array (null while the node is pooled).</summary>
    public byte[] Array = [];

    /// <summary>The next node, typed (the base class's <see cref="ReadOnlySequenceSegment{T}.Next"/> is the same node).</summary>
    public BufferSegment? NextSegment;

    /// <summary>The position of this segment's first byte in the chain (the sequence's running index).</summary>
    public long Start
    {
        get => RunningIndex;
        set => RunningIndex = value;
    }

    public static BufferSegment Rent(byte[] array, long start)
    {
        var cache = t_cache;
        BufferSegment node;
        if (cache is not null && t_count > 0)
        {
            int index = --t_count;
            node = cache[index]!;
            cache[index] = null;
        }
        else
        {
            node = new BufferSegment();
        }
        node.Array = array;
        node.RunningIndex = start;
        node.Memory = default;
        return node;
    }

    public void Link(BufferSegment? next)
    {
        NextSegment = next;
        Next = next;
    }

    /// <summary>Sets the bytes the sequence sees: the first <paramref name="length"/> bytes of the array.</summary>
    public void Expose(int length) => Memory = new ReadOnlyMemory<byte>(Array, 0, length);

    /// <summary>Forgets the array and links (so a cached node keeps no buffer alive) and caches the node, or drops it when the cache is full.</summary>
    public static void Return(BufferSegment node)
    {
        node.Array = [];
        node.Memory = default;
        node.Link(null);
        var cache = t_cache ??= new BufferSegment?[CacheSize];
        if (t_count < cache.Length) cache[t_count++] = node;
    }
}
