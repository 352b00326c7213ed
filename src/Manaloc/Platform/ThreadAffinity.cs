namespace Manaloc.Platform;

/// <summary>Best-effort processor affinity for the calling thread (a dispatcher worker pins itself).</summary>
/// <remarks>Stateless, thread-safe: each call changes the calling thread's own mask only.</remarks>
internal static class ThreadAffinity
{
    /// <summary>The highest processor number plus one that <see cref="TryPinCurrentThread"/> can pin to on any platform.</summary>
    public const int MaxProcessors = LinuxNative.MaxPinnableProcessors;

    /// <summary>
    /// Pins the calling thread to <paramref name="processor"/>. Linux: <c>sched_setaffinity</c> on the calling
    /// thread. Windows: <c>SetThreadAffinityMask</c> (processors 0-63 of the current group). Elsewhere, or when the
    /// processor is not in the allowed set (a container, <c>taskset</c>), returns false and the thread stays unpinned.
    /// </summary>
    public static bool TryPinCurrentThread(int processor)
    {
        try
        {
            if (OperatingSystem.IsLinux())
            {
                return LinuxNative.PinCurrentThread(processor) == 0;
            }
            if (OperatingSystem.IsWindows() && processor is >= 0 and < 64)
            {
                return WindowsNative.SetThreadAffinityMask(WindowsNative.GetCurrentThread(), (nuint)(1UL << processor)) != 0;
            }
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
        {
            // No such call on this platform: stay unpinned.
        }
        return false;
    }
}
