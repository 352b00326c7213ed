using Manaloc.Pooling;

namespace Manaloc.Buffers;

/// <summary>Creates uninitialised byte arrays of one size class (the contents of a rented buffer are unspecified, as with ArrayPool).</summary>
internal sealed class BufferPolicy(int size) : PoolPolicy<byte[]>
{
    public override byte[] Create() => GC.AllocateUninitializedArray<byte>(size);
}
