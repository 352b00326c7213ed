using System.Globalization;

namespace Manaloc.Tests.Platform;

/// <summary>The process's mappings as Linux's /proc/self/smaps lists them: one record (its lines) per mapping.</summary>
internal static class Smaps
{
    /// <summary>Every mapping's record: the range line (<c>start-end perms offset device inode [path]</c>) and its fields.</summary>
    public static List<string[]> Records()
    {
        string[] lines = File.ReadAllLines("/proc/self/smaps");
        var records = new List<string[]>();
        int start = -1;
        for (int i = 0; i <= lines.Length; i++)
        {
            if (i < lines.Length && !TryRange(lines[i], out _, out _)) continue;
            if (start >= 0) records.Add(lines[start..i]);
            start = i;
        }
        return records;
    }

    /// <summary>The record of the mapping that holds <paramref name="address"/>, or null.</summary>
    public static string[]? Holding(nuint address)
        => Records().FirstOrDefault(r => TryRange(r[0], out ulong start, out ulong end) && address >= start && address < end);

    /// <summary>A field's value (<c>VmFlags:</c>, <c>THPeligible:</c>), trimmed.</summary>
    public static string Field(string[] record, string name)
        => record.FirstOrDefault(l => l.StartsWith(name, StringComparison.Ordinal))?[name.Length..].Trim() ?? $"({name} missing)";

    /// <summary>Kilobytes resident in the mappings advised for huge pages (<c>hg</c> among their flags).</summary>
    public static long HugePageAdvisedResidentKilobytes()
        => Records().Where(r => (" " + Field(r, "VmFlags:") + " ").Contains(" hg ", StringComparison.Ordinal))
            .Sum(r => long.Parse(Field(r, "Rss:").Replace("kB", "", StringComparison.Ordinal).Trim(), CultureInfo.InvariantCulture));

    private static bool TryRange(string line, out ulong start, out ulong end)
    {
        start = end = 0;
        int dash = line.IndexOf('-', StringComparison.Ordinal);
        int space = line.IndexOf(' ', StringComparison.Ordinal);
        return dash > 0 && space > dash
            && ulong.TryParse(line.AsSpan(0, dash), NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out start)
            && ulong.TryParse(line.AsSpan(dash + 1, space - dash - 1), NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out end);
    }
}
