using System.Buffers;
using System.Diagnostics;

namespace Manaloc.Buffers;

/// <summary>
/// The segment store under <see cref="PooledBufferWriter"/> and <see cref="PooledBufferStream"/>: a linked list of
/// arrays rented from a <see cref="BufferManager"/>. Growing appends an array and never copies; each array is
/// returned exactly once, by <see cref="ReleaseAll"/> or <see cref="ReleaseAfter"/>, which unlink it first.
/// </summary>
/// <remarks>
/// <para>Sizes: each new array is as large as all before it together (so n bytes take O(log n) arrays while small, and
/// at most twice the bytes written), from <see cref="InitialSegmentSize"/> up to <see cref="MaxSegmentSize"/>,
/// and never below what the caller needs at once. Power-of-two sizes, the manager's classes, so every array is pooled.</para>
/// <para>A mutable struct held in a field of its one owner (no allocation of its own). Not thread-safe.</para>
/// </remarks>
internal struct SegmentChain(BufferManager manager)
{
    /// <summary>The first array's size: one 4 KiB page (a small payload takes one array, like a pipe's segment).</summary>
    public const int InitialSegmentSize = 4096;

    /// <summary>The largest array taken for growth alone (a bigger one only when a caller asks for more at once).</summary>
    public const int MaxSegmentSize = 1 << 20;

    public readonly BufferManager Manager = manager;
    public BufferSegment? Head;
    public BufferSegment? Tail;

    /// <summary>The sum of the arrays' lengths.</summary>
    public long Capacity;

    /// <summary>Rents an array of at least <paramref name="minimumSize"/> bytes, links it last, and gives it the running index <paramref name="start"/>.</summary>
    public BufferSegment Append(int minimumSize, long start)
    {
        byte[] array = Manager.Rent(NextSize(minimumSize));
        var node = BufferSegment.Rent(array, start);
        if (Tail is null) Head = node;
        else Tail.Link(node);
        Tail = node;
        Capacity += array.Length;
        return node;
    }

    /// <summary>Swaps the last segment's array for one of at least <paramref name="minimumSize"/> bytes (the old one goes back first).</summary>
    public BufferSegment ReplaceTailArray(int minimumSize)
    {
        var tail = Tail!;
        Capacity -= tail.Array.Length;
        Manager.Return(tail.Array);
        tail.Array = []; // if the rent below throws, Dispose must not return the old array again
        tail.Array = Manager.Rent(NextSize(minimumSize));
        Capacity += tail.Array.Length;
        return tail;
    }

    private readonly int NextSize(int minimumSize)
    {
        int largest = Math.Min(MaxSegmentSize, Manager.MaxBufferSize);
        return Math.Max((int)Math.Clamp(Capacity, Math.Min(InitialSegmentSize, largest), largest), minimumSize);
    }

    /// <summary>Returns every array and node; the chain is empty afterwards.</summary>
    public void ReleaseAll()
    {
        var node = Head;
        Head = null; // unlinked before anything is returned: a second call finds nothing
        Tail = null;
        Capacity = 0;
        ReturnFrom(node);
    }

    /// <summary>Returns every array and node after <paramref name="keep"/>, which becomes the last.</summary>
    public void ReleaseAfter(BufferSegment keep)
    {
        Debug.Assert(Head is not null, "keep is one of the chain's nodes");
        var node = keep.NextSegment;
        keep.Link(null);
        Tail = keep;
        Capacity = 0;
        for (var n = Head; n is not null; n = n.NextSegment) Capacity += n.Array.Length;
        ReturnFrom(node);
    }

    private readonly void ReturnFrom(BufferSegment? node)
    {
        while (node is not null)
        {
            var next = node.NextSegment;
            Manager.Return(node.Array);
            BufferSegment.Return(node);
            node = next;
        }
    }

    /// <summary>The bytes of the first <paramref name="length"/> positions, where every segment but the last is full.</summary>
    public readonly ReadOnlySequence<byte> FullSegmentsSequence(long length)
    {
        if (length == 0 || Head is null) return ReadOnlySequence<byte>.Empty;
        var node = Head;
        while (true)
        {
            int inThis = (int)Math.Min(node.Array.Length, length - node.Start);
            node.Expose(inThis);
            if (node.Start + inThis == length) return new ReadOnlySequence<byte>(Head, 0, node, inThis);
            node = node.NextSegment!;
        }
    }

    /// <summary>The segment that holds position <paramref name="position"/> (below <see cref="Capacity"/>), searching forward from <paramref name="hint"/> when it starts at or before it.</summary>
    public readonly BufferSegment Find(long position, BufferSegment? hint)
    {
        Debug.Assert(position >= 0 && position < Capacity);
        var node = hint is not null && hint.Start <= position ? hint : Head!;
        while (position >= node.Start + node.Array.Length) node = node.NextSegment!;
        return node;
    }
}
