using System.Runtime.InteropServices;

namespace Manaloc.Lab.Platform;

/// <summary>
/// The lab's own calls into the operating system, through libc (the runtime maps the name <c>libc</c> to the platform's
/// C library): setting any thread's affinity mask, the scheduler's round-robin interval, a thread's CPU clock, the CPU
/// a measuring thread runs on. What only the lab needs lives here, not in the library; the library keeps its own
/// (reading the process's mask, a worker pinning itself) in Manaloc.Platform.
/// </summary>
/// <remarks>
/// Every entry point is unprivileged. Callers check <see cref="OperatingSystem.IsLinux"/> first (or get null); a missing
/// entry point surfaces as <see cref="DllNotFoundException"/> or <see cref="EntryPointNotFoundException"/>. Thread-safe:
/// the calls keep no state here.
/// </remarks>
internal static unsafe partial class LabNative
{
    /// <summary>EINVAL: a processor number the kernel cannot take.</summary>
    public const int EINVAL = 22;

    /// <summary>CLOCK_THREAD_CPUTIME_ID: the calling thread's CPU time.</summary>
    public const int ClockThreadCpuTimeId = 3;

    [LibraryImport("libc", EntryPoint = "sched_setaffinity", SetLastError = true)]
    private static partial int SchedSetAffinity(int pid, nuint size, byte* mask);

    [LibraryImport("libc", EntryPoint = "sched_rr_get_interval", SetLastError = true)]
    private static partial int SchedRrGetInterval(int pid, Timespec* interval);

    [LibraryImport("libc", EntryPoint = "clock_gettime")]
    private static partial int ClockGetTime(int clock, Timespec* time);

    [LibraryImport("libc", EntryPoint = "setpriority", SetLastError = true)]
    private static partial int SetPriority(int which, int who, int priority);

    /// <summary>The lowest scheduling priority a thread can ask for (nice 19).</summary>
    public const int LowestPriority = 19;

    /// <summary>
    /// Gives the calling thread nice value <paramref name="nice"/> (Linux keeps a nice value per thread, and PRIO_PROCESS
    /// with 0 names the calling thread): raising it needs no privilege. True when the kernel took it.
    /// </summary>
    public static bool SetCallingThreadNice(int nice) => SetPriority(0, 0, nice) == 0;

    [StructLayout(LayoutKind.Sequential)]
    private struct Timespec
    {
        public nint Seconds;
        public nint Nanoseconds;
    }

    /// <summary>Sets the affinity of <paramref name="pid"/> (0: the calling thread; else a thread id) to <paramref name="processors"/>.</summary>
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

    /// <summary>Reads <paramref name="clock"/> in nanoseconds; false when the call fails.</summary>
    public static bool TryGetClock(int clock, out long nanoseconds)
    {
        Timespec t;
        if (ClockGetTime(clock, &t) != 0)
        {
            nanoseconds = 0;
            return false;
        }
        nanoseconds = ((long)t.Seconds * 1_000_000_000L) + t.Nanoseconds;
        return true;
    }

    /// <summary>The CPU the calling thread is running on now (Linux <c>sched_getcpu</c>); null elsewhere or when the call fails.</summary>
    /// <remarks>
    /// A snapshot: the scheduler may move the thread right after. The placement recorder samples it at the end of
    /// every measured round, so a thread that moved shows up as more than one CPU.
    /// </remarks>
    public static int? CurrentCpu()
    {
        if (!OperatingSystem.IsLinux()) return null;
        try
        {
            int cpu = SchedGetCpu();
            return cpu >= 0 ? cpu : null;
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
        {
            return null;
        }
    }

    [LibraryImport("libc", EntryPoint = "sched_getcpu")]
    private static partial int SchedGetCpu();

    /// <summary>RUSAGE_THREAD (Linux): the calling thread's own resource usage.</summary>
    private const int RusageThread = 1;

    // struct rusage on 64-bit Linux: two timevals (16 bytes each), then fourteen longs; ru_nivcsw is the last.
    private const int RusageBytes = 144;
    private const int RusageInvoluntarySwitchesOffset = 136;

    [LibraryImport("libc", EntryPoint = "getrusage")]
    private static partial int GetRusage(int who, byte* usage);

    /// <summary>
    /// The calling thread's involuntary context switches so far (Linux <c>getrusage(RUSAGE_THREAD)</c>'s
    /// <c>ru_nivcsw</c>: the times the scheduler took the thread off its core while it could still run); -1 elsewhere or
    /// when the call fails. One system call and no allocation, so a measuring loop may call it between its timed spans.
    /// </summary>
    public static long InvoluntarySwitchesOfCurrentThread()
    {
        if (!OperatingSystem.IsLinux() || IntPtr.Size != 8) return -1;
        byte* usage = stackalloc byte[RusageBytes];
        try
        {
            return GetRusage(RusageThread, usage) == 0 ? *(long*)(usage + RusageInvoluntarySwitchesOffset) : -1;
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
        {
            return -1;
        }
    }

    private const int ProtReadWrite = 0x1 | 0x2;
    private const int MapPrivateAnonymous = 0x02 | 0x20;
    /// <summary>MADV_HUGEPAGE: back the range with transparent huge pages where the kernel can.</summary>
    private const int MadviseHugePage = 14;

    [LibraryImport("libc", EntryPoint = "mmap", SetLastError = true)]
    private static partial nint Mmap(nint address, nuint length, int protection, int flags, int fd, nint offset);

    [LibraryImport("libc", EntryPoint = "munmap")]
    private static partial int Munmap(nint address, nuint length);

    [LibraryImport("libc", EntryPoint = "madvise")]
    private static partial int Madvise(nint address, nuint length, int advice);

    /// <summary>
    /// Linux: <paramref name="bytes"/> of zeroed, private anonymous memory advised for transparent huge pages (as the
    /// library's own large blocks are), so a floor built on it pays the same address translation as the structures it
    /// bounds; null elsewhere or when the system refuses (the caller allocates as usual). Free with <see cref="UnmapHugePages"/>.
    /// </summary>
    public static byte* MapHugePages(nuint bytes)
    {
        if (!OperatingSystem.IsLinux() || IntPtr.Size != 8) return null;
        try
        {
            nint block = Mmap(0, bytes, ProtReadWrite, MapPrivateAnonymous, -1, 0);
            if (block == -1) return null;
            _ = Madvise(block, bytes, MadviseHugePage); // advice only: without it the block is still valid, on base pages
            return (byte*)block;
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
        {
            return null;
        }
    }

    /// <summary>Unmaps a block from <see cref="MapHugePages"/>.</summary>
    public static void UnmapHugePages(byte* block, nuint bytes) => _ = Munmap((nint)block, bytes);
}
