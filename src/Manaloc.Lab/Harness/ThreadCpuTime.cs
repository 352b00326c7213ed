using Manaloc.Lab.Platform;

namespace Manaloc.Lab.Harness;

/// <summary>
/// The calling thread's CPU time (Linux: <c>clock_gettime(CLOCK_THREAD_CPUTIME_ID)</c>): time the thread ran,
/// not time it waited for a core. On a machine shared with other work, wall time mostly measures the waiting.
/// </summary>
/// <remarks>Thread-safe (each call reads the caller's own clock). Elsewhere <see cref="IsAvailable"/> is false and the
/// clock reads 0, so callers fall back to wall time.</remarks>
internal static class ThreadCpuTime
{
    /// <summary>True on Linux, where the per-thread CPU clock is read.</summary>
    public static bool IsAvailable { get; } = OperatingSystem.IsLinux() && Probe();

    /// <summary>The calling thread's CPU time in nanoseconds (0 when not available).</summary>
    public static long NowNanoseconds()
    {
        return IsAvailable && LabNative.TryGetClock(LabNative.ClockThreadCpuTimeId, out long nanoseconds) ? nanoseconds : 0;
    }

    private static bool Probe()
    {
        try
        {
            return LabNative.TryGetClock(LabNative.ClockThreadCpuTimeId, out _);
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
}
