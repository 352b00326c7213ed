using System.Runtime.InteropServices;

namespace Manaloc.Platform;

/// <summary>
/// Zero-filled native blocks whose pages are faulted in one by one, on their first touch: memory a caller takes in one
/// step and fills over many (a hash table's next segment, an arena chunk), so no single step pays for all its pages.
/// </summary>
/// <remarks>
/// <para>Why: <c>NativeMemory.AlignedAlloc</c> and a clear touch every page at once; on fresh memory that is one page
/// fault per 4 KiB (several microseconds each in a virtual machine), all in the call that allocates. A private anonymous
/// mapping is zero-filled by the kernel and its pages are faulted in when first written, so the faults land on the
/// operations that first write each page, one or two at a time.</para>
/// <para>Linux: an anonymous private mapping (page-aligned, so 64-byte aligned); freeing unmaps it, so the resident memory
/// falls at once. Elsewhere: <see cref="NativeMemory.AlignedAlloc"/> (64-byte aligned) and a clear. Thread-safe: no state.</para>
/// </remarks>
internal static unsafe class PageBlocks
{
    /// <summary>A zero-filled block of at least <paramref name="bytes"/> bytes, aligned to 64 bytes, or null when the system refused the memory.</summary>
    public static byte* TryAllocate(long bytes)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(bytes);
        if (OperatingSystem.IsLinux()) return LinuxNative.MapPages((nuint)bytes);
        byte* block;
        try
        {
            block = (byte*)NativeMemory.AlignedAlloc((nuint)bytes, 64);
        }
        catch (OutOfMemoryException)
        {
            return null;
        }
        NativeMemory.Clear(block, (nuint)bytes);
        return block;
    }

    /// <summary>Whether <see cref="Discard"/> can hand a block's pages back while keeping it readable: Linux, where blocks
    /// are private anonymous mappings and <c>madvise(MADV_DONTNEED)</c> drops their pages (a later read sees zero-filled
    /// pages, never a fault). Elsewhere blocks come from the C heap, whose pages cannot be dropped without freeing them.
    /// Windows could do it for <c>VirtualAlloc</c>'d blocks (<c>DiscardVirtualMemory</c> or <c>MEM_RESET</c> keep the range
    /// committed and readable, contents undefined, and leave the working set), not done here: it cannot be tested here.</summary>
    public static bool CanDiscard => OperatingSystem.IsLinux();

    /// <summary>Gives the pages of a block <see cref="TryAllocate"/> returned back to the system, keeping its addresses
    /// readable (zeros) until <see cref="Free"/>; true when done. Only where <see cref="CanDiscard"/> (false elsewhere, and
    /// when the call fails: the pages then stay resident until <see cref="Free"/>).</summary>
    public static bool Discard(byte* block, long bytes)
        => block != null && CanDiscard && LinuxNative.DiscardPages(block, (nuint)RoundUpToPages(bytes));

    /// <summary>A mapping's length: whole pages (a block of a few hundred bytes is one page, all of it the block's).</summary>
    private static long RoundUpToPages(long bytes)
    {
        long page = Environment.SystemPageSize;
        return (bytes + page - 1) & ~(page - 1);
    }

    /// <summary>Gives back a block <see cref="TryAllocate"/> returned for <paramref name="bytes"/> (the same figure).</summary>
    public static void Free(byte* block, long bytes)
    {
        if (block == null) return;
        if (OperatingSystem.IsLinux()) LinuxNative.Unmap(block, (nuint)bytes);
        else NativeMemory.AlignedFree(block);
    }
}
