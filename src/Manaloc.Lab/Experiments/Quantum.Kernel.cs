using System.Globalization;
using System.IO.Compression;
using Manaloc.Lab.Harness;
using Manaloc.Platform;

namespace Manaloc.Lab.Experiments;

/// <summary>The kernel's scheduler settings, read beside the measured slices (what a reader of the figures needs to compare them).</summary>
public sealed partial class Quantum
{
    /// <summary>The scheduler settings this process may read; unreadable ones are listed as such.</summary>
    internal static ResultTable KernelSettings()
    {
        var rows = new List<IReadOnlyList<string>>();
        void Add(string name, string? value, string source) => rows.Add([name, value ?? "not readable", source]);
        if (OperatingSystem.IsLinux())
        {
            Add("kernel", ReadTrimmed("/proc/sys/kernel/osrelease"), "/proc/sys/kernel/osrelease");
            string? rr = null;
            try
            {
                rr = LinuxNative.GetRoundRobinInterval(0) is TimeSpan t ? $"{t.TotalMilliseconds:0.###} ms" : null;
            }
            catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
            {
                // Reported as not readable.
            }
            Add("sched_rr_get_interval (this thread, SCHED_OTHER)", rr, "sched_rr_get_interval(0)");
            foreach (string file in new[]
            {
                "/sys/kernel/debug/sched/base_slice_ns", "/proc/sys/kernel/sched_min_granularity_ns", "/proc/sys/kernel/sched_latency_ns",
                "/proc/sys/kernel/sched_rr_timeslice_ms", "/proc/sys/kernel/sched_cfs_bandwidth_slice_us", "/proc/sys/kernel/sched_autogroup_enabled",
            })
            {
                if (File.Exists(file) || file.StartsWith("/sys/kernel/debug", StringComparison.Ordinal)) Add(Path.GetFileName(file), ReadTrimmed(file), file);
            }
            Add("CONFIG_HZ (timer tick rate)", KernelConfigHz(), "/boot/config-<release> or /proc/config.gz");
        }
        else
        {
            Add("scheduler settings", null, "read on Linux only");
        }
        return new ResultTable("Kernel scheduler settings", ["setting", "value", "source"], rows);
    }

    private static string? KernelConfigHz()
    {
        try
        {
            string? release = ReadTrimmed("/proc/sys/kernel/osrelease");
            string boot = $"/boot/config-{release}";
            IEnumerable<string> lines;
            if (release is not null && File.Exists(boot))
            {
                lines = File.ReadLines(boot);
            }
            else if (File.Exists("/proc/config.gz"))
            {
                using var gzip = new GZipStream(File.OpenRead("/proc/config.gz"), CompressionMode.Decompress);
                using var reader = new StreamReader(gzip);
                lines = reader.ReadToEnd().Split('\n');
            }
            else
            {
                return null;
            }
            return lines.FirstOrDefault(l => l.StartsWith("CONFIG_HZ=", StringComparison.Ordinal))?["CONFIG_HZ=".Length..];
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or InvalidDataException)
        {
            return null;
        }
    }

    private static string? ReadTrimmed(string path)
    {
        try
        {
            return File.ReadAllText(path).Trim();
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }
}
