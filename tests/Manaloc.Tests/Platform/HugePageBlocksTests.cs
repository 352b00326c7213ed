using System.Globalization;
using Manaloc.Platform;

namespace Manaloc.Tests.Platform;

public sealed unsafe class HugePageBlocksTests
{
    [Fact]
    public void A_block_is_aligned_zeroed_and_writable_to_its_last_byte()
    {
        const long length = 2L * HugePageBlocks.UnitBytes;
        byte* block = HugePageBlocks.Allocate(length);
        try
        {
            Assert.Equal(0UL, (ulong)block % HugePageBlocks.UnitBytes);
            var span = new Span<byte>(block, (int)length);
            if (OperatingSystem.IsLinux()) Assert.Equal(-1, span.IndexOfAnyExcept((byte)0));
            span.Fill(0xA5);
            Assert.Equal(0xA5, block[length - 1]);
            Assert.Equal(0xA5, block[0]);
        }
        finally
        {
            HugePageBlocks.Free(block, length);
        }
    }

    [Theory]
    [InlineData(0L)]
    [InlineData(-2097152L)]
    [InlineData(4096L)]
    [InlineData(2097152L + 4096)]
    public void Lengths_that_are_not_whole_units_are_refused(long length)
    {
        var e = Assert.Throws<ArgumentOutOfRangeException>(() => { HugePageBlocks.Allocate(length); });
        Assert.Equal("length", e.ParamName);
    }

    [LinuxFact]
    public void On_Linux_the_block_is_mapped_and_advised_for_huge_pages()
    {
        const long length = HugePageBlocks.UnitBytes;
        byte* block = HugePageBlocks.Allocate(length);
        try
        {
            // The mapping that holds the block holds all of it and carries the kernel's "hg" flag (MADV_HUGEPAGE).
            var (start, end, flags) = MappingOf((ulong)block);
            Assert.True(start <= (ulong)block && (ulong)block + length <= end, $"mapping {start:x}-{end:x} does not hold the block");
            Assert.Contains("hg", flags.Split(' '));
        }
        finally
        {
            HugePageBlocks.Free(block, length);
        }
    }

    private static (ulong Start, ulong End, string Flags) MappingOf(ulong address)
        => MappingOrNull(address) ?? throw new Xunit.Sdk.XunitException($"no mapping holds {address:x}");

    private static (ulong Start, ulong End, string Flags)? MappingOrNull(ulong address)
    {
        (ulong Start, ulong End)? current = null;
        foreach (string line in File.ReadLines("/proc/self/smaps"))
        {
            int dash = line.IndexOf('-');
            int space = line.IndexOf(' ');
            if (dash > 0 && space > dash && ulong.TryParse(line.AsSpan(0, dash), NumberStyles.HexNumber, CultureInfo.InvariantCulture, out ulong start)
                && ulong.TryParse(line.AsSpan(dash + 1, space - dash - 1), NumberStyles.HexNumber, CultureInfo.InvariantCulture, out ulong end))
            {
                current = start <= address && address < end ? (start, end) : null;
            }
            else if (current is { } c && line.StartsWith("VmFlags:", StringComparison.Ordinal))
            {
                return (c.Start, c.End, line["VmFlags:".Length..].Trim());
            }
        }
        return null;
    }
}
