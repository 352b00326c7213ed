using System.Runtime.InteropServices;

namespace Manaloc.Platform;

/// <summary>
/// The few Linux system calls the library needs (the processor reading, a dispatcher worker pinning itself,
/// giving pages back), through libc (the runtime maps the name
/// <c>libc</c> to the platform's C library). Every entry point is unprivileged.
/// </summary>
/// <remarks>
/// Affinity on Linux belongs to a thread: <c>pid = 0</c> means the calling thread, and a child
/// started with fork/exec inherits the mask of the thread that started it. Callers check
/// <see cref="OperatingSystem.IsLinux"/> first; a missing entry point surfaces as
/// <see cref="DllNotFoundException"/> or <see cref="EntryPointNotFoundException"/>, which callers
/// turn into a reported problem. Thread-safe: the calls keep no state here.
/// </remarks>
internal static unsafe partial class LinuxNative
{
    /// <summary>EINVAL: for sched_getaffinity, the mask buffer is smaller than the kernel's.</summary>
    public const int EINVAL = 22;

    /// <summary>The largest mask buffer tried: 8 Mi processors, far beyond any machine.</summary>
    private const int MaxMaskBytes = 1 << 20;

    [LibraryImport("libc", EntryPoint = "sched_getaffinity", SetLastError = true)]
    private static partial int SchedGetAffinity(int pid, nuint size, byte* mask);

    [LibraryImport("libc", EntryPoint = "sched_setaffinity", SetLastError = true)]
    private static partial int SchedSetAffinity(int pid, nuint size, ulong* mask);

    /// <summary>Processors a mask of <see cref="PinCurrentThread"/> can name: the size of glibc's <c>cpu_set_t</c>.</summary>
    public const int MaxPinnableProcessors = 1024;

    [LibraryImport("libc", EntryPoint = "sched_setscheduler")]
    private static partial int SchedSetScheduler(int pid, int policy, int* parameter);

    /// <summary>SCHED_BATCH: a normal-priority thread whose wake-ups do not preempt the thread running on its core.</summary>
    private const int SchedBatch = 3;

    /// <summary>
    /// Puts the calling thread in the batch scheduling class (unprivileged; the same nice value): when another thread wakes
    /// it, it does not preempt the thread running on the core it wakes on, but waits for a free core or the next tick. For
    /// a helper thread that must not take the core from the thread that woke it. False when the kernel refused.
    /// </summary>
    public static bool MakeCurrentThreadBatch()
    {
        int priority = 0; // the static priority, 0 for the normal classes
        return SchedSetScheduler(0, SchedBatch, &priority) == 0;
    }

    [LibraryImport("libc", EntryPoint = "madvise")]
    private static partial int Madvise(void* address, nuint length, int advice);

    /// <summary>MADV_DONTNEED: the pages go back to the kernel; the next touch maps zero-filled pages.</summary>
    private const int MadvDontNeed = 4;

    /// <summary>MADV_HUGEPAGE: back the range with transparent huge pages where the kernel can (its <c>madvise</c> mode).</summary>
    private const int MadvHugePage = 14;

    [LibraryImport("libc", EntryPoint = "mmap", SetLastError = true)]
    private static partial void* Mmap(void* address, nuint length, int protection, int flags, int fd, nint offset);

    [LibraryImport("libc", EntryPoint = "munmap")]
    private static partial int Munmap(void* address, nuint length);

    // The same values on x86-64 and Arm64 (the generic Linux ABI).
    private const int ProtReadWrite = 0x1 | 0x2;
    private const int MapPrivateAnonymous = 0x02 | 0x20;

    /// <summary>
    /// Maps <paramref name="length"/> bytes (a multiple of <paramref name="alignment"/>, a power of two that is a multiple
    /// of the page size) of zero-filled private memory at an address aligned to <paramref name="alignment"/>; with
    /// <paramref name="adviseHugePages"/>, asks for transparent huge pages on it (advice only: where the kernel has none,
    /// the range stays on base pages). Null when the system refuses the mapping. Free with <see cref="Unmap"/>. Linux only.
    /// </summary>
    public static byte* MapAligned(nuint length, nuint alignment, bool adviseHugePages)
    {
        // Over-map by the alignment, then unmap the unaligned head and the tail: the kernel aligns mappings to pages only.
        byte* raw = (byte*)Mmap(null, length + alignment, ProtReadWrite, MapPrivateAnonymous, -1, 0);
        if (raw == (byte*)-1) return null;
        byte* aligned = (byte*)(((nuint)raw + alignment - 1) & ~(alignment - 1));
        if (aligned > raw) Munmap(raw, (nuint)(aligned - raw));
        byte* end = aligned + length;
        nuint tail = (nuint)(raw + length + alignment - end);
        if (tail > 0) Munmap(end, tail);
        if (adviseHugePages) Madvise(aligned, length, MadvHugePage); // advice: a refusal leaves base pages, which work the same
        return aligned;
    }

    /// <summary>
    /// Maps <paramref name="length"/> bytes of zero-filled private memory on base pages, page-aligned; each page is
    /// faulted in on its first touch. Null when the system refuses the mapping. Free with <see cref="Unmap"/>. Linux only.
    /// </summary>
    public static byte* MapPages(nuint length)
    {
        byte* mapped = (byte*)Mmap(null, length, ProtReadWrite, MapPrivateAnonymous, -1, 0);
        return mapped == (byte*)-1 ? null : mapped;
    }

    /// <summary>Unmaps a range <see cref="MapAligned"/> or <see cref="MapPages"/> returned (its pages go back to the kernel).</summary>
    public static void Unmap(byte* address, nuint length) => Munmap(address, length);

    /// <summary>
    /// Gives the whole pages inside [<paramref name="start"/>, <paramref name="start"/> + <paramref name="length"/>) back to
    /// the kernel, keeping the range mapped (a later read sees zeros); true when that was done. Linux only (false elsewhere,
    /// or when the call is unavailable or fails: the memory then simply stays resident).
    /// </summary>
    public static bool DiscardPages(byte* start, nuint length)
    {
        if (!OperatingSystem.IsLinux()) return false;
        nuint page = (nuint)Environment.SystemPageSize;
        nuint first = ((nuint)start + page - 1) & ~(page - 1);
        nuint end = ((nuint)start + length) & ~(page - 1);
        if (end <= first) return false;
        try
        {
            return Madvise((void*)first, end - first, MadvDontNeed) == 0;
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
        {
            return false;
        }
    }

    /// <summary>
    /// Reads the affinity mask of <paramref name="pid"/> (0: the calling thread) as the kernel's
    /// bytes: bit <c>i % 8</c> of byte <c>i / 8</c> is processor <c>i</c>.
    /// </summary>
    /// <returns>The mask, or null with <paramref name="errno"/> set when the call fails.</returns>
    public static byte[]? GetAffinity(int pid, out int errno)
    {
        errno = EINVAL;
        for (int size = 128; size <= MaxMaskBytes; size *= 2)
        {
            byte[] mask = new byte[size];
            int written;
            fixed (byte* p = mask)
            {
                written = SchedGetAffinity(pid, (nuint)size, p);
            }
            if (written >= 0)
            {
                errno = 0;
                // The raw system call returns the bytes it wrote; glibc returns 0 and zero-fills the rest.
                return written > 0 && written < size ? mask.AsSpan(0, written).ToArray() : mask;
            }
            errno = Marshal.GetLastPInvokeError();
            if (errno != EINVAL)
            {
                return null;
            }
        }
        return null;
    }

    /// <summary>
    /// Pins the calling thread to <paramref name="processor"/> (pid 0 names the calling thread, its tid, not the
    /// process). Allocation-free: the mask lives on the stack.
    /// </summary>
    /// <returns>0 on success, else the errno (EINVAL for a processor outside the process's allowed set, or out of range).</returns>
    public static int PinCurrentThread(int processor)
    {
        if (processor is < 0 or >= MaxPinnableProcessors) return EINVAL;
        const int Words = MaxPinnableProcessors / 64;
        ulong* mask = stackalloc ulong[Words];
        new Span<ulong>(mask, Words).Clear();
        mask[processor / 64] = 1UL << (processor % 64);
        return SchedSetAffinity(0, Words * sizeof(ulong), mask) == 0 ? 0 : Marshal.GetLastPInvokeError();
    }
}
