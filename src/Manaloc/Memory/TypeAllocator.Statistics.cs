namespace Manaloc.Memory;

public sealed unsafe partial class TypeAllocator
{
    /// <summary>The slab's counters (native bytes held, chunks, large blocks, allocations, frees) as one snapshot: this
    /// allocator's one statistics shape.</summary>
    /// <remarks>Thread-safe and cheap (it sums counters, it scans nothing); approximate while other threads allocate.</remarks>
    public SlabStatistics GetSlabStatistics() => _slab.GetStatistics();

    /// <summary>Counts the live objects and record arrays of every type by scanning the heap.</summary>
    /// <remarks>A method, not a property, because it scans every slot's generation stamp: its cost is proportional to the
    /// memory held. Thread-safe; a snapshot while other threads allocate. <see cref="GetLiveObjects()"/> gives the same
    /// count by type.</remarks>
    public long CountLiveObjects() => GetLiveObjects(withStacks: false).TotalCount;

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
                byte* block = chunk.BlockAt(slot);
                if (!chunk.IsLive(block)) continue;
                ushort tag = chunk.TagOf(block);
                byTag.TryGetValue(tag, out var entry);
                entry.Stacks ??= [];
                if (withStacks && _stacks is not null && entry.Stacks.Count < 10 && _stacks.TryGetValue((nint)block, out var stack))
                {
                    entry.Stacks.Add(stack);
                }
                byTag[tag] = (entry.Count + 1, entry.Bytes + blockBytes, entry.Stacks);
            }
        });
        // One entry per type (tags are per type). Names are C#-style without namespaces, unless two live types share one:
        // then those entries carry their namespaces, so the report never merges or confuses them.
        var shortNames = byTag.Keys.ToDictionary(tag => tag, tag => RecordTypes.TagName(tag));
        var shared = shortNames.Values.GroupBy(n => n, StringComparer.Ordinal).Where(g => g.Count() > 1).Select(g => g.Key).ToHashSet(StringComparer.Ordinal);
        var byName = new Dictionary<string, (long Count, long Bytes, List<string> Stacks)>(StringComparer.Ordinal);
        foreach (var (tag, entry) in byTag)
        {
            string name = shared.Contains(shortNames[tag]) ? RecordTypes.TagName(tag, full: true) : shortNames[tag];
            // Same full name from two assemblies: numbered rather than merged.
            for (int n = 2; !byName.TryAdd(name, entry); n++) name = $"{RecordTypes.TagName(tag, full: true)} ({n})";
        }
        return new LiveObjectReport(byName
            .OrderByDescending(kv => kv.Value.Count).ThenBy(kv => kv.Key, StringComparer.Ordinal)
            .Select(kv => new LiveObjectEntry { TypeName = kv.Key, Count = kv.Value.Count, Bytes = kv.Value.Bytes, AllocationStacks = kv.Value.Stacks.Take(10).ToArray() })
            .ToArray());
    }
}
