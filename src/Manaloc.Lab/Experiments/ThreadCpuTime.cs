using System.Runtime.InteropServices;

namespace Manaloc.Lab.Experiments;

/// <summary>
/// The calling thread's CPU time (Linux: <c>clock_gettime(CLOCK_THREAD_CPUTIME_ID)</c>): time the thread ran,
/// not time it waited for a core. On a machine shared with other work, wall time mostly measures the waiting.
/// </summary>
/// <remarks>Thread-safe (each call reads the caller's own clock). Elsewhere <see cref="IsAvailable"/> is false and the
/// clock reads 0, so callers fall back to wall time.</remarks>
internal static partial class ThreadCpuTime
{
    private const int ClockThreadCpuTimeId = 3;

    /// <summary>True on Linux, where the per-thread CPU clock is read.</summary>
    public static bool IsAvailable { get; } = OperatingSystem.IsLinux() && Probe();

    /// <summary>The calling thread's CPU time in nanoseconds (0 when not available).</summary>
    public static long NowNanoseconds()
    {
        if (!IsAvailable || clock_gettime(ClockThreadCpuTimeId, out var ts) != 0) return 0;
        return ts.Seconds * 1_000_000_000L + ts.Nanoseconds;
    }

    private static bool Probe()
    {
        try
        {
            return clock_gettime(ClockThreadCpuTimeId, out _) == 0;
        }
        catch (DllNotFoundException)
        {
            return false;
        }
        catch (EntryPointNotFoundException)
        {
            return false;
        }
    }

    [StructLayout(LayoutKind.Sequential)]
    private struct Timespec
    {
        public long Seconds;
        public long Nanoseconds;
    }

    [LibraryImport("libc", SetLastError = false)]
    private static partial int clock_gettime(int clock, out Timespec time);
}
