using System.Diagnostics;
using System.Globalization;
using System.IO.Compression;
using Manaloc.Lab.Harness;
using Manaloc.Platform;

namespace Manaloc.Lab.Experiments;

/// <summary>The spinning threads, their run logs and the kernel settings read beside them.</summary>
public sealed partial class Quantum
{
    /// <summary>Reads the clock until the deadline, logging each run between jumps longer than <see cref="GapMicroseconds"/>.</summary>
    private static void Spin(RunLog log, long end)
    {
        long gap = (long)(GapMicroseconds * Stopwatch.Frequency / 1_000_000);
        long last = Stopwatch.GetTimestamp();
        long runStart = last;
        while (true)
        {
            long now = Stopwatch.GetTimestamp();
            if (now - last > gap)
            {
                log.Add(runStart, last);
                runStart = now;
            }
            if (now >= end)
            {
                log.Add(runStart, now);
                return;
            }
            last = now;
        }
    }

    /// <summary>True when <paramref name="other"/> started a run within <see cref="HandOffMicroseconds"/> of <paramref name="end"/>: the processor went straight to it.</summary>
    private static bool HandedTo(RunLog other, long end)
    {
        int index = Array.BinarySearch(other.Starts, 0, other.Count, end);
        int next = index < 0 ? ~index : index;
        return next < other.Count && other.Starts[next] - end <= (long)(HandOffMicroseconds * Stopwatch.Frequency / 1_000_000);
    }

    private static double Ms(long ticks) => ticks * 1000.0 / Stopwatch.Frequency;

    private static ResultTable Histogram(IReadOnlyList<double> slices)
    {
        double[] edges = [0, 0.25, 0.5, 1, 2, 3, 4, 6, 8, 12, 16, 32, double.PositiveInfinity];
        var rows = new List<IReadOnlyList<string>>();
        for (int i = 0; i + 1 < edges.Length; i++)
        {
            int n = slices.Count(s => s >= edges[i] && s < edges[i + 1]);
            if (n == 0) continue;
            string range = double.IsPositiveInfinity(edges[i + 1]) ? $"≥ {edges[i]} ms" : $"{edges[i]}–{edges[i + 1]} ms";
            rows.Add([range, n.ToString(CultureInfo.InvariantCulture), ((double)n / slices.Count).ToString("P0", CultureInfo.InvariantCulture)]);
        }
        return new ResultTable("Run lengths (every complete run)", ["length", "count", "share"], rows);
    }

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
                rr = LabNative.GetRoundRobinInterval(0) is TimeSpan t ? $"{t.TotalMilliseconds:0.###} ms" : null;
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

    /// <summary>Start and end timestamps of one thread's runs, preallocated so the loop never allocates.</summary>
    private sealed class RunLog(int capacity)
    {
        public long[] Starts { get; } = new long[capacity];
        public long[] Ends { get; } = new long[capacity];
        public int Count { get; private set; }
        public bool Overflowed { get; private set; }

        public void Add(long start, long end)
        {
            if (Count == Starts.Length)
            {
                Overflowed = true;
                return;
            }
            Starts[Count] = start;
            Ends[Count] = end;
            Count++;
        }
    }
}
