using System.Runtime.InteropServices;

namespace Manaloc.Platform;

/// <summary>
/// The inputs of a Linux reading: the directory standing in for <c>/</c>, the affinity mask, the
/// runtime's processor count and the architecture. The real system is one probe; tests build others
/// from a temporary directory of synthetic files and a chosen mask.
/// </summary>
/// <param name="Root">The directory whose <c>proc/</c> and <c>sys/</c> are read (<c>/</c> for the real system).</param>
/// <param name="EnvironmentProcessorCount">What <see cref="Environment.ProcessorCount"/> said.</param>
/// <param name="AffinityMask">The kernel's mask bytes, or null when the mask could not be read.</param>
/// <param name="AffinityProblem">Why the mask could not be read, or null.</param>
/// <param name="Architecture">The process architecture (for the padding figure).</param>
internal sealed record ProcessorProbe(string Root, int EnvironmentProcessorCount, byte[]? AffinityMask, string? AffinityProblem, Architecture Architecture)
{
    /// <summary>
    /// The process's mask (its main thread's, as <c>taskset -p</c> and Process.ProcessorAffinity
    /// report it, so the answer does not depend on which thread asks) and the real file system.
    /// </summary>
    public static ProcessorProbe ForThisLinuxProcess()
    {
        byte[]? mask = null;
        string? problem = null;
        try
        {
            mask = LinuxNative.GetAffinity(Environment.ProcessId, out int errno);
            if (mask is null) problem = $"sched_getaffinity failed (errno {errno}); affinity unknown.";
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
        {
            problem = $"sched_getaffinity is not available ({e.GetType().Name}); affinity unknown.";
        }
        return new ProcessorProbe("/", Environment.ProcessorCount, mask, problem, RuntimeInformation.ProcessArchitecture);
    }
}
