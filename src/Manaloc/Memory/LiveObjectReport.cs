using System.Text;

namespace Manaloc.Memory;

/// <summary>What a <see cref="TypeAllocator"/> still holds, by type: a leak report at Dispose, statistics on demand.</summary>
/// <remarks>Immutable; safe to pass between threads. Taken while other threads allocate, it is a snapshot that may be slightly behind.</remarks>
public sealed class LiveObjectReport
{
    // Internal: the allocator builds reports.
    internal LiveObjectReport(IReadOnlyList<LiveObjectEntry> entries) => Entries = entries;

    /// <summary>One entry per type, most objects first.</summary>
    public IReadOnlyList<LiveObjectEntry> Entries { get; }

    /// <summary>Live objects of every type.</summary>
    public long TotalCount => Entries.Sum(e => e.Count);

    /// <summary>Native bytes of every live object.</summary>
    public long TotalBytes => Entries.Sum(e => e.Bytes);

    /// <summary>One line per type, with stacks indented below.</summary>
    public override string ToString()
    {
        if (Entries.Count == 0) return "No live objects.";
        var sb = new StringBuilder();
        foreach (var e in Entries)
        {
            sb.Append(e.TypeName).Append(": ").Append(e.Count).Append(" live, ").Append(e.Bytes).AppendLine(" bytes");
            foreach (var stack in e.AllocationStacks)
            {
                sb.AppendLine("  allocated at:");
                foreach (var line in stack.Split('\n', StringSplitOptions.RemoveEmptyEntries)) sb.Append("    ").AppendLine(line.TrimEnd());
            }
        }
        return sb.ToString();
    }
}
