namespace Manaloc.Buffers;

/// <summary>Sizes and switches of a <see cref="BufferMemoryPool"/>. Validated when the pool is created.</summary>
/// <remarks>Thread safety: read once by the constructor; do not change it concurrently with that.</remarks>
public sealed class BufferMemoryPoolOptions
{
    /// <summary>The pool's name (exception text; also the name of the manager the pool creates). Default <c>memory-pool</c>.</summary>
    public string Name { get; set; } = "memory-pool";

    /// <summary>
    /// What <c>Rent()</c> (or <c>Rent(-1)</c>) returns: a power of two from 16 B to <see cref="MaxBufferSize"/>.
    /// Default 4,096 (Kestrel's block size and <see cref="System.IO.Pipelines"/>' default segment size).
    /// </summary>
    public int BlockSize { get; set; } = 4096;

    /// <summary>
    /// The largest rent the pool serves (a larger one throws <see cref="ArgumentOutOfRangeException"/>, as
    /// <c>MemoryPool&lt;byte&gt;.Shared</c> does past its maximum; a <c>Pipe</c> allocates such segments itself).
    /// 0 (the default) means the manager's <see cref="BufferManager.MaxBufferSize"/>: 64 MiB for a manager the pool creates.
    /// Otherwise a power of two from <see cref="BlockSize"/> to 1 GiB, and not above a given <see cref="Manager"/>'s maximum.
    /// </summary>
    public int MaxBufferSize { get; set; }

    /// <summary>
    /// The arrays come from the pinned object heap (<c>GC.AllocateUninitializedArray(length, pinned: true)</c>), for
    /// socket I/O, which pins every buffer it uses. Default off. Applies to the manager the pool creates: it cannot be
    /// combined with <see cref="Manager"/>.
    /// </summary>
    public bool Pinned { get; set; }

    /// <summary>
    /// Diagnostic mode: each rent gets its own owner, whose <see cref="System.Buffers.IMemoryOwner{T}.Memory"/> (and any
    /// span taken from that memory later) throws <see cref="ObjectDisposedException"/> naming the pool once the owner was
    /// disposed, and a stale owner's Dispose can never return another rent's buffer; the manager the pool creates poisons returned
    /// arrays (<see cref="BufferManagerOptions.PoisonReturnedBuffers"/>), so memory read through a span kept past Dispose shows
    /// <see cref="BufferManagerOptions.PoisonByte"/>. Costs an owner allocation and a fill of the array per rent. Default off.
    /// </summary>
    public bool Diagnostics { get; set; }

    /// <summary>
    /// The buffer manager the pool rents from (shared with its other users; the pool's Dispose leaves it alone), or null
    /// (the default): the pool creates a manager named <see cref="Name"/> and disposes it with itself.
    /// </summary>
    public BufferManager? Manager { get; set; }
}
