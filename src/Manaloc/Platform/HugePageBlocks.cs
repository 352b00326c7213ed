using System.Runtime.InteropServices;

namespace Manaloc.Platform;

/// <summary>
/// Native blocks in whole 2 MiB granules, 2 MiB-aligned and zero-filled, on transparent huge pages where the system
/// gives them (Linux with THP in <c>always</c> or <c>madvise</c> mode).
/// </summary>
/// <remarks>
/// <para>Why: a structure of tens of megabytes read at random addresses on 4 KiB pages misses the TLB on almost every
/// access and pays a page walk beside the cache miss; on 2 MiB pages a few hundred megabytes stay within the TLB's
/// reach. The cost: memory comes in 2 MiB granules (a block's untouched remainder is resident once any of its huge
/// pages is touched), and the first touch of a huge page zeroes all 2 MiB of it at once: one page fault that takes
/// what 512 small ones would, instead of spreading it over 512 first touches. So callers take these blocks only for
/// structures already megabytes large, and carve them.</para>
/// <para>Linux: an anonymous private mapping (zero-filled by the kernel, pages faulted in on first touch) with
/// <c>madvise(MADV_HUGEPAGE)</c>; freeing unmaps it, so the resident memory falls at once. Elsewhere:
/// <see cref="NativeMemory.AlignedAlloc"/> and a clear, on the system's base pages. Thread-safe: no state.</para>
/// </remarks>
internal static unsafe class HugePageBlocks
{
    /// <summary>The granule and the alignment: one x86-64 or Arm64 (4 KiB base pages) huge page.</summary>
    public const int GranuleBytes = 2 * 1024 * 1024;

    /// <summary><paramref name="bytes"/> rounded up to whole granules: what <see cref="Allocate"/> takes for them.</summary>
    public static long RoundUp(long bytes) => (bytes + GranuleBytes - 1) & ~(long)(GranuleBytes - 1);

    /// <summary>Whether <paramref name="bytes"/> is a positive whole number of granules: a size that leaves no part of a huge page uncounted.</summary>
    public static bool IsWholeGranules(long bytes) => bytes > 0 && bytes % GranuleBytes == 0;

    /// <summary>A zero-filled block of <see cref="RoundUp"/>(<paramref name="bytes"/>) bytes, aligned to a granule.</summary>
    /// <exception cref="OutOfMemoryException">The system refused the memory.</exception>
    public static byte* Allocate(long bytes) => Map(bytes, adviseHugePages: true);

    /// <summary>
    /// A block as <see cref="Allocate"/>'s (the same size, alignment and <see cref="Free"/>) but not advised for huge
    /// pages: on Linux each 4 KiB page is faulted in on its first touch, so the block's faults are spread over its first
    /// touches instead of one 2 MiB fault. For a caller that cannot take a huge page's fault now (an insert whose ready
    /// block did not come in time).
    /// </summary>
    /// <exception cref="OutOfMemoryException">The system refused the memory.</exception>
    public static byte* AllocateOnBasePages(long bytes) => Map(bytes, adviseHugePages: false);

    private static byte* Map(long bytes, bool adviseHugePages)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(bytes);
        nuint length = (nuint)RoundUp(bytes);
        if (OperatingSystem.IsLinux())
        {
            byte* mapped = LinuxNative.MapAligned(length, GranuleBytes, adviseHugePages);
            if (mapped == null) throw new OutOfMemoryException();
            return mapped;
        }
        byte* block = (byte*)NativeMemory.AlignedAlloc(length, GranuleBytes);
        NativeMemory.Clear(block, length);
        return block;
    }

    /// <summary>As <see cref="PageBlocks.Discard"/>, for a block <see cref="Allocate"/> or <see cref="AllocateOnBasePages"/>
    /// returned for <paramref name="bytes"/>: its pages go back to the system, its addresses stay readable until <see cref="Free"/>.</summary>
    public static bool Discard(byte* block, long bytes)
        => block != null && PageBlocks.CanDiscard && LinuxNative.DiscardPages(block, (nuint)RoundUp(bytes));

    /// <summary>Gives back a block <see cref="Allocate"/> or <see cref="AllocateOnBasePages"/> returned for <paramref name="bytes"/> (the same figure).</summary>
    public static void Free(byte* block, long bytes)
    {
        if (block == null) return;
        if (OperatingSystem.IsLinux()) LinuxNative.Unmap(block, (nuint)RoundUp(bytes));
        else NativeMemory.AlignedFree(block);
    }
}
