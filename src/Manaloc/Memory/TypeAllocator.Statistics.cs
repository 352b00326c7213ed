namespace Manaloc.Memory;

public sealed unsafe partial class TypeAllocator
{
    /// <summary>Native bytes held by this allocator's slab (chunks and large blocks).</summary>
    /// <remarks>Thread-safe; a snapshot.</remarks>
    public long ReservedBytes => _slab.ReservedBytes;

    /// <summary>Slab chunks held.</summary>
    /// <remarks>Thread-safe; a snapshot.</remarks>
    public long ChunkCount => _slab.ChunkCount;

    /// <summary>Live objects and record arrays of every type.</summary>
    /// <remarks>Thread-safe; scans the generation stamps (cost proportional to the memory held).</remarks>
    public long LiveObjectCount => GetLiveObjects(withStacks: false).TotalCount;

    /// <summary>The slab's counters (allocations, frees, chunks, bytes).</summary>
    /// <remarks>Thread-safe; approximate while other threads allocate.</remarks>
    public SlabStatistics GetSlabStatistics() => _slab.GetStatistics();

    /// <summary>Objects and arrays still alive, by type, with allocation stacks when capture is on: the leak report on demand.</summary>
    /// <remarks>Thread-safe; scans every slot's stamp (odd = alive), so it costs time proportional to the memory held.</remarks>
    public LiveObjectReport GetLiveObjects() => GetLiveObjects(withStacks: _stacks is not null);

    internal LiveObjectReport GetLiveObjects(bool withStacks)
    {
        if (_disposed) return LastLeakReport ?? new LiveObjectReport([]);
        var byTag = new Dictionary<ushort, (long Count, long Bytes, List<string> Stacks)>();
        _slab.VisitChunks(chunk =>
        {
            int slots = chunk.ClassIndex < 0 ? 1 : Volatile.Read(ref chunk.Carved); // racy snapshot: statistics
            long blockBytes = chunk.ClassIndex < 0 ? (long)chunk.Length : chunk.BlockSize;
            for (int slot = 0; slot < slots; slot++)
            {
                if ((Volatile.Read(ref chunk.Stamps[slot]) & 1) == 0) continue;
                ushort tag = chunk.Tags![slot];
                byTag.TryGetValue(tag, out var entry);
                entry.Stacks ??= [];
                if (withStacks && _stacks is not null && entry.Stacks.Count < 10
                    && _stacks.TryGetValue((nint)(chunk.Blocks + (nint)slot * chunk.BlockSize), out var stack))
                {
                    entry.Stacks.Add(stack);
                }
                byTag[tag] = (entry.Count + 1, entry.Bytes + blockBytes, entry.Stacks);
            }
        });
        var byName = new Dictionary<string, (long Count, long Bytes, List<string> Stacks)>(StringComparer.Ordinal);
        foreach (var (tag, entry) in byTag)
        {
            string name = RecordTypes.TagName(tag);
            if (byName.TryGetValue(name, out var existing))
            {
                existing.Stacks.AddRange(entry.Stacks);
                byName[name] = (existing.Count + entry.Count, existing.Bytes + entry.Bytes, existing.Stacks);
            }
            else
            {
                byName[name] = entry;
            }
        }
        return new LiveObjectReport(byName
            .OrderByDescending(kv => kv.Value.Count).ThenBy(kv => kv.Key, StringComparer.Ordinal)
            .Select(kv => new LiveObjectEntry(kv.Key, kv.Value.Count, kv.Value.Bytes, kv.Value.Stacks.Take(10).ToArray()))
            .ToArray());
    }
}
