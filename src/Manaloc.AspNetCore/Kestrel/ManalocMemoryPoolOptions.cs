namespace Manaloc.AspNetCore.Kestrel;

/// <summary>
/// How <see cref="ManalocMemoryPoolFactory"/> builds the pools it gives Kestrel; bound from the configuration
/// section <c>Manaloc:MemoryPool</c> by <see cref="ManalocServiceCollectionExtensions.AddManalocKestrelMemoryPool"/>.
/// </summary>
/// <remarks>Thread safety: set it up before the host starts; the factory copies it.</remarks>
public sealed class ManalocMemoryPoolOptions
{
    /// <summary>The configuration section the options are bound from: <c>Manaloc:MemoryPool</c>.</summary>
    public const string SectionName = "Manaloc:MemoryPool";

    /// <summary>The bytes of a default rent (a power of two from 16 to 1,048,576; default 4096, the size Kestrel's own pool uses).</summary>
    public int BlockSize { get; set; } = 4096;

    /// <summary>Whether the arrays are pinned (allocated on the pinned object heap; default true): the socket pins its buffers for every receive and send, and pinned arrays cost the GC nothing to keep still.</summary>
    public bool Pinned { get; set; } = true;

    /// <summary>Whether every rent gets its own owner that reports a use after return, and every block given back is poisoned (<see cref="Manaloc.Buffers.BufferManagerOptions.PoisonReturnedBuffers"/>) so a late reader sees <c>0xDD</c> bytes (default false; a debugging aid: it allocates per rent and fills each block given back).</summary>
    public bool Diagnostics { get; set; }

    /// <summary>Every problem with these values, each naming its key under <paramref name="section"/>; empty when they are valid.</summary>
    internal List<string> Problems(string section)
    {
        var problems = new List<string>();
        if (BlockSize is < 16 or > 1 << 20 || !System.Numerics.BitOperations.IsPow2(BlockSize))
            problems.Add($"{section}:{nameof(BlockSize)} must be a power of two from 16 to 1048576 (was {BlockSize}).");
        return problems;
    }
}
