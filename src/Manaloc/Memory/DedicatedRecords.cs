using System.Collections.Concurrent;

namespace Manaloc.Memory;

/// <summary>
/// The live records larger than the largest slab class that struct handles point at, by address, process-wide.
/// </summary>
/// <remarks>
/// A struct handle holds no reference to anything, and a dedicated block's stamp is a field of its chunk object (the
/// block's memory goes back to the system at Delete), so a handle to such a record finds its stamp here: a dictionary
/// lookup per checked access, for records of more than 8 KB only. Thread-safe (a concurrent dictionary); an entry is
/// added before the handle is returned and removed before the block is freed.
/// </remarks>
internal static unsafe class DedicatedRecords
{
    private static readonly ConcurrentDictionary<nint, SlabChunk> s_live = new();

    public static void Add(SlabChunk chunk)
    {
        s_live[(nint)chunk.Memory] = chunk;
        chunk.InDedicatedRecords = true;
    }

    /// <summary>Removes the entry of <paramref name="chunk"/> (not a newer block the system placed at the same address).</summary>
    public static void Remove(SlabChunk chunk)
    {
        if (chunk.InDedicatedRecords) s_live.TryRemove(new KeyValuePair<nint, SlabChunk>((nint)chunk.Memory, chunk));
    }

    /// <summary>The chunk of the live dedicated record at <paramref name="address"/>, or null.</summary>
    public static SlabChunk? Find(byte* address) => s_live.GetValueOrDefault((nint)address);

    /// <summary>True when the dedicated record at <paramref name="address"/> is live with <paramref name="generation"/>.</summary>
    public static bool IsLive(byte* address, uint generation) => Find(address) is { } chunk && Volatile.Read(ref chunk.DedicatedStamp) == generation;
}
