using System.Globalization;
using Manaloc.Platform;

namespace Manaloc.Tests.Platform;

public sealed unsafe class HugePageBlocksTests
{
    [Fact]
    public void A_block_is_whole_granules_aligned_zeroed_and_writable()
    {
        const long Asked = HugePageBlocks.GranuleBytes + 1;
        byte* block = HugePageBlocks.Allocate(Asked);
        try
        {
            Assert.Equal(0, (long)block % HugePageBlocks.GranuleBytes);
            long length = HugePageBlocks.RoundUp(Asked);
            Assert.Equal(2L * HugePageBlocks.GranuleBytes, length);
            for (long i = 0; i < length; i += 4096) Assert.Equal(0, block[i]);
            Assert.Equal(0, block[length - 1]);
            block[0] = 1;
            block[length - 1] = 2;
            Assert.Equal(2, block[length - 1]);
        }
        finally
        {
            HugePageBlocks.Free(block, Asked);
        }
    }

    [LinuxFact]
    public void On_Linux_a_block_is_advised_and_eligible_for_huge_pages()
    {
        byte* block = HugePageBlocks.Allocate(HugePageBlocks.GranuleBytes);
        block[0] = 1;
        string[]? mapping = Mapping((nuint)block);
        Assert.NotNull(mapping);
        // hg: the range carries MADV_HUGEPAGE; THPeligible 1: the kernel may back it with huge pages (unless THP is off).
        Assert.Contains(" hg", Field(mapping, "VmFlags:"), StringComparison.Ordinal);
        if (!File.ReadAllText("/sys/kernel/mm/transparent_hugepage/enabled").Contains("[never]", StringComparison.Ordinal))
        {
            Assert.Equal("1", Field(mapping, "THPeligible:"));
        }
        HugePageBlocks.Free(block, HugePageBlocks.GranuleBytes);
    }

    /// <summary>The /proc/self/smaps record of the mapping that holds <paramref name="address"/>, or null.</summary>
    private static string[]? Mapping(nuint address)
    {
        string[] lines = File.ReadAllLines("/proc/self/smaps");
        for (int i = 0; i < lines.Length; i++)
        {
            if (!TryRange(lines[i], out ulong start, out ulong end) || address < start || address >= end) continue;
            int next = i + 1;
            while (next < lines.Length && !TryRange(lines[next], out _, out _)) next++;
            return lines[i..next];
        }
        return null;
    }

    private static string Field(string[] mapping, string name)
        => mapping.FirstOrDefault(l => l.StartsWith(name, StringComparison.Ordinal))?[name.Length..].Trim() ?? $"({name} missing)";

    /// <summary>A record's first line: <c>start-end perms offset device inode [path]</c>, addresses in hex.</summary>
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
