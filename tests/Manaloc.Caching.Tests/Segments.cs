using System.Buffers;

namespace Manaloc.Caching.Tests;

/// <summary>A <see cref="ReadOnlySequence{T}"/> of several segments, as a pipe or HybridCache's serializer hands over.</summary>
internal sealed class Segments : ReadOnlySequenceSegment<byte>
{
    private Segments(ReadOnlyMemory<byte> memory, long runningIndex)
    {
        Memory = memory;
        RunningIndex = runningIndex;
    }

    /// <summary><paramref name="bytes"/> cut into pieces of <paramref name="pieceLength"/> bytes (the last shorter).</summary>
    public static ReadOnlySequence<byte> Of(byte[] bytes, int pieceLength)
    {
        if (bytes.Length == 0) return ReadOnlySequence<byte>.Empty;
        var first = new Segments(bytes.AsMemory(0, Math.Min(pieceLength, bytes.Length)), 0);
        var last = first;
        for (int at = pieceLength; at < bytes.Length; at += pieceLength)
        {
            var next = new Segments(bytes.AsMemory(at, Math.Min(pieceLength, bytes.Length - at)), at);
            last.Next = next;
            last = next;
        }
        return new ReadOnlySequence<byte>(first, 0, last, last.Memory.Length);
    }
}
