using System.Buffers;
using Manaloc.Buffers;

namespace Manaloc.AspNetCore.Kestrel;

/// <summary>
/// A <see cref="BufferMemoryPool"/> as Kestrel expects a pool to behave: a rent of 0 bytes (or less) is a rent of one block.
/// </summary>
/// <remarks>
/// Why: Kestrel's own pool hands out a 4 KiB block whatever size is asked, and Kestrel's response writer asks for
/// 0 bytes when it only needs "a block" (<c>GetSpan()</c> with no hint before the headers are written). The
/// <see cref="MemoryPool{T}"/> contract lets <c>Rent(0)</c> return empty memory, as <see cref="BufferMemoryPool"/>
/// and <see cref="MemoryPool{T}.Shared"/> do, and an empty block makes that writer throw. Thread safety: as the inner pool's.
/// </remarks>
internal sealed class KestrelBlockPool(BufferMemoryPool inner) : MemoryPool<byte>
{
    public BufferMemoryPool Inner => inner;

    public override int MaxBufferSize => inner.MaxBufferSize;

    public override IMemoryOwner<byte> Rent(int minimumBufferSize = -1) => inner.Rent(minimumBufferSize <= 0 ? -1 : minimumBufferSize);

    protected override void Dispose(bool disposing)
    {
        if (disposing) inner.Dispose();
    }

    public override string ToString() => inner.ToString();
}
