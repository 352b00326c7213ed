using System.Runtime.InteropServices;

namespace Manaloc.Lab.Platform;

/// <summary>
/// The lab's own calls into the operating system: what only the lab needs (where a measuring thread
/// ran) lives here, not in the library.
/// </summary>
internal static partial class LabNative
{
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
}
