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
        string[]? mapping = Smaps.Holding((nuint)block);
        Assert.NotNull(mapping);
        // hg: the range carries MADV_HUGEPAGE; THPeligible 1: the kernel may back it with huge pages (unless THP is off).
        Assert.Contains(" hg", Smaps.Field(mapping, "VmFlags:"), StringComparison.Ordinal);
        if (!File.ReadAllText("/sys/kernel/mm/transparent_hugepage/enabled").Contains("[never]", StringComparison.Ordinal))
        {
            Assert.Equal("1", Smaps.Field(mapping, "THPeligible:"));
        }
        HugePageBlocks.Free(block, HugePageBlocks.GranuleBytes);
    }

    [Theory]
    [InlineData(0, false)]
    [InlineData(-HugePageBlocks.GranuleBytes, false)]
    [InlineData(HugePageBlocks.GranuleBytes - 1, false)]
    [InlineData(HugePageBlocks.GranuleBytes, true)]
    [InlineData(HugePageBlocks.GranuleBytes + 4096, false)]
    [InlineData(3L * HugePageBlocks.GranuleBytes, true)]
    public void Only_positive_whole_granules_count_as_whole(long bytes, bool whole)
        => Assert.Equal(whole, HugePageBlocks.IsWholeGranules(bytes));
}
