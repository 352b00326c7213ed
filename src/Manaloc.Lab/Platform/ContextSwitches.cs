namespace Manaloc.Lab.Platform;

/// <summary>
/// How often the calling thread was taken off its core while it could still run (the scheduler preempted it): on Linux
/// the <c>nonvoluntary_ctxt_switches</c> line of <c>/proc/thread-self/status</c>; elsewhere unknown.
/// </summary>
/// <remarks>Reads allocate (a file read): call between measured phases, never inside one.</remarks>
internal static class ContextSwitches
{
    private const string Status = "/proc/thread-self/status";
    private const string Field = "nonvoluntary_ctxt_switches:";

    /// <summary>The calling thread's involuntary context switches so far; null where the system does not tell them.</summary>
    public static long? InvoluntaryOfCurrentThread()
    {
        if (!OperatingSystem.IsLinux() || !File.Exists(Status)) return null;
        foreach (string line in File.ReadLines(Status))
        {
            if (!line.StartsWith(Field, StringComparison.Ordinal)) continue;
            return long.TryParse(line.AsSpan(Field.Length).Trim(), NumberStyles.None, CultureInfo.InvariantCulture, out long count) ? count : null;
        }
        return null;
    }
}
