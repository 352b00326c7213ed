using System.Buffers;
using Manaloc.Pooling;

namespace Manaloc.Buffers;

/// <summary>
/// One array of a <see cref="SegmentChain"/>, linked for <see cref="ReadOnlySequence{T}"/>. Pooled process-wide (one
/// semi-local pool), so a writer or stream that grows allocates no node after warm-up.
/// </summary>
/// <remarks>Not thread-safe: a node belongs to one chain between its Rent and its Return.</remarks>
internal sealed class BufferSegment : ReadOnlySequenceSegment<byte>
{
    private static readonly PoolTier<BufferSegment> s_nodes = new(
        PoolPolicies.Create(static () => new BufferSegment()),
        new PoolOptions { Name = "buffers.segments", TrimAfterGen2 = true });

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
        var node = s_nodes.Rent();
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

    /// <summary>Forgets the array and links (so a pooled node keeps no buffer alive) and pools the node.</summary>
    public static void Return(BufferSegment node)
    {
        node.Array = [];
        node.Memory = default;
        node.Link(null);
        s_nodes.Return(node);
    }
}
