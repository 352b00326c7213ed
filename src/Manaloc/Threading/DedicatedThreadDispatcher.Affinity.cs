using System.Runtime.InteropServices;

namespace Manaloc.Threading;

// Best-effort processor affinity for a worker, applied by the worker to itself.
public sealed partial class DedicatedThreadDispatcher
{
    private const int MaxAffinityProcessors = 1024; // the size of glibc's cpu_set_t

    /// <summary>
    /// Pins the calling thread to <paramref name="processor"/>. Linux: <c>sched_setaffinity</c> with
    /// pid 0, which names the calling thread (its tid), not the process. Windows:
    /// <c>SetThreadAffinityMask</c> (processors 0-63 of the current group). Elsewhere, or when the
    /// processor is not in the allowed set (a container, <c>taskset</c>), returns false and the
    /// thread stays unpinned.
    /// </summary>
    private static unsafe bool TryPinCurrentThread(int processor)
    {
        try
        {
            if (OperatingSystem.IsLinux())
            {
                const int Words = MaxAffinityProcessors / 64;
                ulong* mask = stackalloc ulong[Words];
                new Span<ulong>(mask, Words).Clear();
                mask[processor / 64] = 1UL << (processor % 64);
                return sched_setaffinity(0, (nuint)(Words * sizeof(ulong)), mask) == 0;
            }
            if (OperatingSystem.IsWindows() && processor < 64)
            {
                return SetThreadAffinityMask(GetCurrentThread(), (nuint)(1UL << processor)) != 0;
            }
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
        {
            // No such call on this platform: stay unpinned.
        }
        return false;
    }

    [LibraryImport("libc", SetLastError = true)]
    private static unsafe partial int sched_setaffinity(int pid, nuint cpusetsize, ulong* mask);

    [LibraryImport("kernel32.dll")]
    private static partial nuint SetThreadAffinityMask(nint thread, nuint mask);

    [LibraryImport("kernel32.dll")]
    private static partial nint GetCurrentThread();
}
