using System.Runtime.InteropServices;

namespace Manaloc.Platform;

/// <summary>
/// The few Linux system calls the Platform area needs, through libc (the runtime maps the name
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
    private static partial int SchedSetAffinity(int pid, nuint size, byte* mask);

    [LibraryImport("libc", EntryPoint = "madvise")]
    private static partial int Madvise(void* address, nuint length, int advice);

    /// <summary>MADV_DONTNEED: the pages go back to the kernel; the next touch maps zero-filled pages.</summary>
    private const int MadvDontNeed = 4;

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

    [LibraryImport("libc", EntryPoint = "sched_rr_get_interval", SetLastError = true)]
    private static partial int SchedRrGetInterval(int pid, Timespec* interval);

    [StructLayout(LayoutKind.Sequential)]
    private struct Timespec
    {
        public nint Seconds;
        public nint Nanoseconds;
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

    /// <summary>Sets the affinity of <paramref name="pid"/> (0: the calling thread) to <paramref name="processors"/>.</summary>
    /// <returns>0 on success, else the errno.</returns>
    public static int SetAffinity(int pid, ReadOnlySpan<int> processors)
    {
        int highest = 0;
        foreach (int cpu in processors)
        {
            if (cpu < 0) return EINVAL;
            highest = Math.Max(highest, cpu);
        }
        int size = Math.Max(128, ((highest / 64) + 1) * 8);
        byte[] mask = new byte[size];
        foreach (int cpu in processors)
        {
            mask[cpu / 8] |= (byte)(1 << (cpu % 8));
        }
        fixed (byte* p = mask)
        {
            return SchedSetAffinity(pid, (nuint)size, p) == 0 ? 0 : Marshal.GetLastPInvokeError();
        }
    }

    /// <summary>The round-robin time slice the kernel reports for <paramref name="pid"/> (0: the calling thread), or null.</summary>
    public static TimeSpan? GetRoundRobinInterval(int pid)
    {
        Timespec t;
        if (SchedRrGetInterval(pid, &t) != 0)
        {
            return null;
        }
        return TimeSpan.FromTicks(((long)t.Seconds * TimeSpan.TicksPerSecond) + ((long)t.Nanoseconds / 100));
    }
}
