using System.Globalization;
using Manaloc.Platform;

namespace Manaloc.Tests.Platform;

public sealed unsafe class PageBlocksTests
{
    [Fact]
    public void A_block_is_aligned_zeroed_and_writable()
    {
        const long Bytes = 61_440 + 32; // not a whole number of pages
        byte* block = PageBlocks.TryAllocate(Bytes);
        Assert.True(block != null);
        try
        {
            Assert.Equal(0, (long)block % 64);
            for (long i = 0; i < Bytes; i += 512) Assert.Equal(0, block[i]);
            Assert.Equal(0, block[Bytes - 1]);
            block[0] = 1;
            block[Bytes - 1] = 2;
            Assert.Equal(1, block[0]);
            Assert.Equal(2, block[Bytes - 1]);
        }
        finally
        {
            PageBlocks.Free(block, Bytes);
        }
    }

    [Fact]
    public void A_size_of_zero_or_less_is_refused()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => (nint)PageBlocks.TryAllocate(0));
        Assert.Throws<ArgumentOutOfRangeException>(() => (nint)PageBlocks.TryAllocate(-4096));
    }

    [LinuxFact]
    public void On_Linux_a_page_is_resident_only_once_touched()
    {
        // The point of the type: no page is faulted in by the allocation, each one by its first write.
        const long Bytes = 16 * 4096;
        byte* block = PageBlocks.TryAllocate(Bytes);
        try
        {
            Assert.Equal(0, ResidentKilobytesOf(block, Bytes));
            block[0] = 1;
            block[5 * 4096] = 1;
            if (!HugePagesAlways()) Assert.Equal(8, ResidentKilobytesOf(block, Bytes));
        }
        finally
        {
            PageBlocks.Free(block, Bytes);
        }
    }

    [LinuxFact]
    public void On_Linux_a_base_page_block_is_not_advised_for_huge_pages_and_faults_in_page_by_page()
    {
        byte* block = HugePageBlocks.AllocateOnBasePages(HugePageBlocks.GranuleBytes);
        try
        {
            Assert.Equal(0, (long)block % HugePageBlocks.GranuleBytes);
            block[0] = 1;
            string[]? mapping = Smaps.Holding((nuint)block);
            Assert.NotNull(mapping);
            Assert.DoesNotContain(" hg", " " + Smaps.Field(mapping, "VmFlags:"), StringComparison.Ordinal);
            if (!HugePagesAlways()) Assert.Equal(4, ResidentKilobytesOf(block, HugePageBlocks.GranuleBytes)); // one base page, not a 2 MiB huge page
            Assert.Equal(0, block[HugePageBlocks.GranuleBytes - 1]);
        }
        finally
        {
            HugePageBlocks.Free(block, HugePageBlocks.GranuleBytes);
        }
    }

    /// <summary>With THP in <c>always</c> mode the kernel may back any range with huge pages, advised or not: page-by-page
    /// faulting is then not this type's to promise.</summary>
    private static bool HugePagesAlways()
        => File.Exists("/sys/kernel/mm/transparent_hugepage/enabled") && File.ReadAllText("/sys/kernel/mm/transparent_hugepage/enabled").Contains("[always]", StringComparison.Ordinal);

    /// <summary>The resident kilobytes of [<paramref name="address"/>, + <paramref name="bytes"/>), page by page
    /// (<c>mincore</c>: a neighbouring mapping the kernel merged with the block does not count).</summary>
    private static long ResidentKilobytesOf(byte* address, long bytes)
    {
        int pages = (int)((bytes + 4095) / 4096);
        byte* vector = stackalloc byte[pages];
        Assert.Equal(0, Mincore(address, (nuint)bytes, vector));
        long resident = 0;
        for (int i = 0; i < pages; i++) resident += vector[i] & 1;
        return resident * 4;
    }

    [System.Runtime.InteropServices.DllImport("libc", EntryPoint = "mincore")]
    private static extern int Mincore(void* address, nuint length, byte* vector);
}
