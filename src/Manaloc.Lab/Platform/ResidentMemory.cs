using System.Diagnostics;

namespace Manaloc.Lab.Platform;

/// <summary>
/// The process's resident set and its peak, managed and native memory alike: on Linux from <c>/proc/self/status</c>
/// (VmRSS, VmHWM), whose peak can be reset to the current resident set by writing 5 to <c>/proc/self/clear_refs</c>, so
/// the peak of one phase is measured alone; elsewhere from <see cref="Process"/>, whose peak cannot be reset.
/// </summary>
/// <remarks>Reads allocate (a file read or a Process object): call between measured phases, never inside one.</remarks>
internal static class ResidentMemory
{
    private const string Status = "/proc/self/status";

    /// <summary>The resident set now, in bytes.</summary>
    public static long Current() => Read("VmRSS:") ?? Process.GetCurrentProcess().WorkingSet64;

    /// <summary>The largest resident set since the process started or since the last successful <see cref="ResetPeak"/>, in bytes.</summary>
    public static long Peak() => Read("VmHWM:") ?? Process.GetCurrentProcess().PeakWorkingSet64;

    /// <summary>Resets <see cref="Peak"/> to the resident set now; false where the system does not allow it (the peak then keeps what came before).</summary>
    public static bool ResetPeak()
    {
        if (!OperatingSystem.IsLinux()) return false;
        try
        {
            File.WriteAllText("/proc/self/clear_refs", "5");
            return true;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return false;
        }
    }

    /// <summary>A "Name:   123 kB" line of /proc/self/status in bytes; null when there is no such file or line.</summary>
    private static long? Read(string field)
    {
        if (!OperatingSystem.IsLinux() || !File.Exists(Status)) return null;
        foreach (string line in File.ReadLines(Status))
        {
            if (!line.StartsWith(field, StringComparison.Ordinal)) continue;
            var parts = line[field.Length..].Split(' ', StringSplitOptions.RemoveEmptyEntries);
            return parts.Length == 2 && parts[1] == "kB" && long.TryParse(parts[0], NumberStyles.None, CultureInfo.InvariantCulture, out long kb) ? kb * 1024 : null;
        }
        return null;
    }
}
