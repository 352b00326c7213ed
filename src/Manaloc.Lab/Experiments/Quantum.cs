using System.IO.Compression;
using Manaloc.Lab.Platform;
using Manaloc.Platform;

namespace Manaloc.Lab.Experiments;

/// <summary>
/// Seed 004, "Length of a Thread Quantum": the article computes Windows' quantum from the clock
/// interval (15.6 ms / 3 = 5.2 ms). Here it is measured: two CPU-bound threads pinned to one
/// processor each read the clock in a tight loop; a jump larger than <see cref="GapMicroseconds"/>
/// means the thread was off the processor, so the runs between jumps are the slices the scheduler
/// granted. The kernel's own settings are listed beside them where readable.
/// </summary>
/// <remarks>
/// The processor is shared with everything else on the machine, so a run may end because another
/// task woke up rather than because the slice expired: runs shorter than Linux's smallest base
/// slice (<see cref="ShortestSliceMs"/>) are reported apart as cut short; how many switches went
/// straight to the sibling (rather than to another process) is reported too. The first and
/// last run of each thread are cut by the start and end of the measurement and are dropped.
/// </remarks>
public sealed class Quantum() : Experiment(
    "quantum", "Length of a Thread Quantum (seed 004)",
    "Slice lengths of two CPU-bound threads pinned to one processor, beside the kernel's scheduler settings.",
    [Slice, CutShort, OffCpu], Slice, quickSeconds: 3, quickLaunches: 2)
{
    /// <summary>A clock jump longer than this means the thread did not run in between.</summary>
    internal const double GapMicroseconds = 50;

    /// <summary>
    /// Linux's smallest base slice (0.75 ms, before scaling by processor count): a run shorter than
    /// this was preempted by a wake-up, not ended by its slice, even when the sibling ran next.
    /// </summary>
    internal const double ShortestSliceMs = 0.75;

    /// <summary>The sibling's run starting this soon after one ends counts as a direct switch to it.</summary>
    internal const double HandOffMicroseconds = 100;

    private const string Slice = "run slice";
    private const string CutShort = "run cut short (< 0.75 ms)";
    private const string OffCpu = "time off the processor";
    private const int MaxRuns = 1 << 17;

    /// <inheritdoc/>
    /// <remarks>Not measured (not comparable) when the threads were not pinned to one processor or hardly switched.</remarks>
    public override Claim Claim => new("One quantum = 1/3 of the 15.6 ms clock interval: 5.2 ms (Windows 7, computed, not measured)", 5.2,
        new Metric("median run slice of two spinning threads pinned to one processor", Unit.Milliseconds, f =>
            f.Find(Slice) is { } slice && slice.Metrics.GetValueOrDefault("pinned") == 1 && slice.Metrics.GetValueOrDefault("slices") >= 4 ? f.Median(slice) : null));
    /// <inheritdoc/>
    /// <remarks>No Manaloc path: how long a CPU-bound thread holds a shared processor, which bounds a spin-then-block wait's worth.</remarks>
    public override Headline Headline => new(
        new Metric("no Manaloc path: run slice of a CPU-bound thread sharing one processor with another", Unit.Milliseconds,
            f => f.Find(Slice) is { } slice && slice.Metrics.GetValueOrDefault("pinned") == 1 ? f.Median(slice) : null));

    /// <inheritdoc/>
    public override IReadOnlyList<ParameterSpec> DescribeParameters(RunSettings settings) =>
    [
        new("seconds", "how long the two pinned threads run", [Duration(settings).TotalSeconds.ToString("0.##", CultureInfo.InvariantCulture)]),
    ];

    private static TimeSpan Duration(RunSettings settings)
        => settings.IsSmoke ? TimeSpan.FromMilliseconds(300) : settings.IsQuick ? TimeSpan.FromSeconds(1) : TimeSpan.FromSeconds(8);

    /// <inheritdoc/>
    public override void Run(ExperimentContext context)
    {
        var duration = Duration(context.Settings);
        int cpu = OperatingSystem.IsLinux() && Manaloc.Platform.Processors.Read().AffinityProcessors is { Count: > 0 } cpus ? cpus[0] : -1;
        var runs = new RunLog[2];
        var pinErrors = new int[2];
        using var ready = new CountdownEvent(2);
        using var go = new ManualResetEventSlim(false);
        var threads = new Thread[2];
        long endTimestamp = 0;
        for (int i = 0; i < threads.Length; i++)
        {
            int index = i;
            runs[index] = new RunLog(MaxRuns);
            threads[i] = new Thread(() =>
            {
                pinErrors[index] = cpu >= 0 ? LabNative.SetAffinity(0, [cpu]) : -1;
                ready.Signal();
                go.Wait();
                Spin(runs[index], Volatile.Read(ref endTimestamp));
            })
            { IsBackground = true, Name = $"quantum-{index}" };
            threads[i].Start();
        }
        if (!ready.Wait(TimeSpan.FromSeconds(10)))
        {
            throw new InvalidOperationException("The pinned threads did not start within 10 s.");
        }
        // Published before 'go' is set; the threads read it after Wait returns (the event orders the two).
        Volatile.Write(ref endTimestamp, LabClock.Now + LabClock.Ticks(duration));
        go.Set();
        foreach (var t in threads)
        {
            if (!t.Join(duration + TimeSpan.FromSeconds(10)))
            {
                throw new InvalidOperationException("A pinned thread did not finish within its time limit.");
            }
        }
        bool pinned = pinErrors.All(e => e == 0);
        if (!pinned)
        {
            context.Note(cpu < 0
                ? "Threads were not pinned (Linux only here): they ran on any processor, so slices mostly measure interruptions by other processes."
                : $"Pinning to processor {cpu} failed (errno {string.Join(", ", pinErrors)}): the threads ran unpinned.");
        }

        var slices = new List<double>();
        var cutShort = new List<double>();
        var gaps = new List<double>();
        int siblingGaps = 0;
        for (int i = 0; i < 2; i++)
        {
            var log = runs[i];
            var other = runs[1 - i];
            for (int r = 0; r < log.Count - 1; r++)
            {
                long gapStart = log.Ends[r], gapEnd = log.Starts[r + 1];
                bool sibling = HandedTo(other, gapStart);
                gaps.Add(Ms(gapEnd - gapStart));
                if (sibling) siblingGaps++;
                // The first run is cut by the start barrier, not the scheduler: skip it.
                if (r == 0) continue;
                double length = Ms(log.Ends[r] - log.Starts[r]);
                (length >= ShortestSliceMs ? slices : cutShort).Add(length);
            }
        }
        var parameters = Parameters.Of(("seconds", Math.Round(duration.TotalSeconds, 2)));
        double siblingShare = gaps.Count == 0 ? 0 : (double)siblingGaps / gaps.Count;
        var metrics = new Dictionary<string, double>
        {
            ["switches"] = gaps.Count,
            ["toSibling"] = siblingGaps,
            ["slices"] = slices.Count,
            ["siblingShare"] = siblingShare,
            ["pinned"] = pinned ? 1 : 0,
            ["overflowed"] = runs.Count(r => r.Overflowed),
        };
        if (slices.Count == 0)
        {
            context.Note($"No complete run of at least {ShortestSliceMs} ms in {duration.TotalSeconds:0.#} s (were the threads really sharing one processor?); the whole run is recorded as one slice.");
            slices.Add(duration.TotalMilliseconds);
            metrics["switches"] = 0;
        }
        context.RecordSamples(Slice, "ms", slices, parameters, lowerIsBetter: false, threads: 2, metrics: metrics);
        if (cutShort.Count > 0) context.RecordSamples(CutShort, "ms", cutShort, parameters, lowerIsBetter: false, threads: 2);
        if (gaps.Count > 0) context.RecordSamples(OffCpu, "ms", gaps, parameters, threads: 2);
        context.Note($"{gaps.Count} switches in {duration.TotalSeconds:0.#} s; {siblingShare:P0} handed the processor straight to the sibling thread (within {HandOffMicroseconds} µs); the rest went to other processes on processor {cpu} first (the machine's other work). Runs of at least {ShortestSliceMs} ms are counted as slices, shorter ones as cut short by a wake-up.");
        context.Note($"A run is the time between clock jumps longer than {GapMicroseconds} µs; Linux enforces slices at timer ticks (CONFIG_HZ), so expect multiples of the tick period.");
        context.AddTable(Histogram([.. cutShort, .. slices]));
        context.AddTable(KernelSettings());
        if (OperatingSystem.IsLinux() && int.TryParse(KernelConfigHz(), NumberStyles.None, CultureInfo.InvariantCulture, out int hz) && hz > 0)
        {
            context.Note($"Timer tick: {1000.0 / hz:0.##} ms (CONFIG_HZ={hz}); a slice that outlives its base slice ends at the next tick.");
        }
    }

    // The spinning threads, their run logs and the kernel settings read beside them.
    /// <summary>Reads the clock until the deadline, logging each run between jumps longer than <see cref="GapMicroseconds"/>.</summary>
    private static void Spin(RunLog log, long end)
    {
        long gap = LabClock.Ticks(TimeSpan.FromMicroseconds(GapMicroseconds));
        long last = LabClock.Now;
        long runStart = last;
        while (true)
        {
            long now = LabClock.Now;
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
        return next < other.Count && other.Starts[next] - end <= LabClock.Ticks(TimeSpan.FromMicroseconds(HandOffMicroseconds));
    }

    private static double Ms(long ticks) => LabClock.Milliseconds(ticks);

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
