using System.Runtime.InteropServices;

namespace Manaloc.Platform;

/// <summary>
/// Native blocks of whole 2 MiB units, aligned to 2 MiB and, on Linux, advised for transparent huge pages
/// (<c>madvise(MADV_HUGEPAGE)</c>, which THP's <c>madvise</c> mode needs). Elsewhere an aligned allocation of the same size.
/// </summary>
/// <remarks>
/// Why: a structure read at random over hundreds of MiB (a cache's index and entries) misses the TLB on nearly every
/// access with 4 KiB pages; a 2 MiB page covers 512 times as much, so the page walks mostly go (in a virtual machine,
/// where every walk is two-dimensional, they are the larger part of a miss). The size is whole units so a huge page
/// never holds memory the caller did not count: a block's resident bytes are at most its length. Thread-safe: no state.
/// </remarks>
internal static unsafe class HugePageBlocks
{
    /// <summary>The unit and alignment: one x64 or arm64 (4 KiB granule) PMD huge page.</summary>
    public const int UnitBytes = 2 << 20;

    /// <summary>Whether <paramref name="length"/> is a positive whole number of units (what <see cref="Allocate"/> takes).</summary>
    public static bool IsWholeUnits(long length) => length > 0 && length % UnitBytes == 0;

    /// <summary>Allocates <paramref name="length"/> bytes, a whole number of <see cref="UnitBytes"/>; zeroed on Linux.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is not a positive multiple of <see cref="UnitBytes"/>.</exception>
    /// <exception cref="OutOfMemoryException">The system refused the memory.</exception>
    public static byte* Allocate(long length)
    {
        if (!IsWholeUnits(length)) ThrowHelper.ThrowArgumentOutOfRange(nameof(length), length, $"A huge-page block is a positive multiple of {UnitBytes} bytes.");
        if (!OperatingSystem.IsLinux()) return (byte*)NativeMemory.AlignedAlloc((nuint)length, UnitBytes);
        byte* block = LinuxNative.MapAlignedHugePages((nuint)length, UnitBytes);
        if (block == null) ThrowHelper.ThrowOutOfMemory((nuint)length);
        return block;
    }

    /// <summary>Frees a block <see cref="Allocate"/> returned, with the same <paramref name="length"/>.</summary>
    public static void Free(byte* block, long length)
    {
        if (block == null) return;
        if (!OperatingSystem.IsLinux()) NativeMemory.AlignedFree(block);
        else LinuxNative.UnmapAligned(block, (nuint)length);
    }
}
