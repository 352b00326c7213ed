using Manaloc.Pooling;

namespace Manaloc.Buffers;

/// <summary>
/// Creates uninitialised byte arrays of one size class (the contents of a rented buffer are unspecified, as with ArrayPool),
/// on the pinned object heap when <paramref name="pinned"/> (socket I/O pins every buffer it sends or receives; a pinned-heap
/// array costs no GC handle and never fragments the compacting heaps).
/// </summary>
internal sealed class BufferPolicy(int size, bool pinned = false) : PoolPolicy<byte[]>
{
    public override byte[] Create() => GC.AllocateUninitializedArray<byte>(size, pinned);
}
