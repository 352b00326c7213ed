using System.Globalization;
using Manaloc.Lab.Harness;
using Manaloc.Platform;
using PlatformProcessors = Manaloc.Platform.Processors;

namespace Manaloc.Lab.Experiments;

/// <summary>The child processes (restricted by affinity mask or cgroup quota) and what they report.</summary>
public sealed partial class Processors
{
    /// <summary>
    /// Runs the measuring child with the starting thread pinned to <paramref name="cpu"/>, then restores
    /// the thread's mask and un-pins any thread created meanwhile.
    /// </summary>
    internal static ChildOutput RunStartedRestricted(ExperimentContext context, int cpu)
    {
        byte[] original = LinuxNative.GetAffinity(0, out int errno)
            ?? throw new InvalidOperationException($"sched_getaffinity failed (errno {errno}); cannot restrict a child.");
        int[] originalCpus = AffinityMask.ToProcessors(original);
        var threadsBefore = ThreadIds();
        int error = LinuxNative.SetAffinity(0, [cpu]);
        if (error != 0)
        {
            throw new InvalidOperationException($"sched_setaffinity to processor {cpu} failed (errno {error}).");
        }
        try
        {
            return context.RunChild("measure", [StartedRestricted]);
        }
        finally
        {
            LinuxNative.SetAffinity(0, originalCpus);
            foreach (int tid in ThreadIds())
            {
                // A thread created while this one was pinned inherited the pin; give it the process's mask back.
                if (!threadsBefore.Contains(tid) && LinuxNative.GetAffinity(tid, out _) is { } mask && AffinityMask.ToProcessors(mask) is [int only] && only == cpu)
                {
                    LinuxNative.SetAffinity(tid, originalCpus);
                }
            }
        }
    }

    /// <summary>
    /// Runs the measuring child from this thread placed in a temporary cgroup v1 with a CPU quota of
    /// <paramref name="processors"/>, so the child starts inside it; then moves this thread, and any
    /// thread created meanwhile, back and removes the cgroup. Returns null with the reason when the
    /// machine does not allow it (no cgroup v1 CPU controller, or no permission to create a cgroup).
    /// </summary>
    internal static ChildOutput? RunUnderQuota(ExperimentContext context, double processors, out string? skipped)
    {
        // Creating a cgroup changes the machine's configuration (briefly, and only as root): opt-in only.
        if (Environment.GetEnvironmentVariable(AllowCgroupVariable) != "1")
        {
            skipped = $"creating a temporary cgroup is opt-in: set {AllowCgroupVariable}=1 (needs root or a delegated cgroup v1 CPU controller)";
            return null;
        }
        var found = CgroupCpuQuota.Read("/", []);
        if (found.Version != "v1" || found.Directory is null)
        {
            skipped = found.Version == "v2"
                ? "cgroup v2 moves whole processes, not the thread that starts the child, and the harness starts the child itself"
                : "no cgroup CPU controller was found";
            return null;
        }
        string? tid = ThreadId();
        if (tid is null)
        {
            skipped = "this thread's id is not readable (/proc/thread-self)";
            return null;
        }
        string original = Path.Combine(found.Directory, "tasks");
        string limited = Path.Combine(found.Directory, $"manaloc-lab-{Environment.ProcessId}-{Guid.NewGuid().ToString("N")[..8]}");
        try
        {
            Directory.CreateDirectory(limited);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            skipped = $"no permission to create a cgroup under {found.Directory} ({e.Message.TrimEnd('.')}); a quota child needs privileges or a delegated cgroup";
            return null;
        }
        try
        {
            try
            {
                const long period = 100_000;
                File.WriteAllText(Path.Combine(limited, "cpu.cfs_period_us"), period.ToString(CultureInfo.InvariantCulture));
                File.WriteAllText(Path.Combine(limited, "cpu.cfs_quota_us"), ((long)(processors * period)).ToString(CultureInfo.InvariantCulture));
                File.WriteAllText(Path.Combine(limited, "tasks"), tid);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                skipped = $"the temporary cgroup could not be configured ({e.Message.TrimEnd('.')})";
                return null;
            }
            skipped = null;
            return context.RunChild("measure", [UnderQuota]);
        }
        finally
        {
            // This thread, and any thread the runtime created while it was inside, go back; then the cgroup is removed.
            foreach (string task in ReadLines(Path.Combine(limited, "tasks")).Prepend(tid).Distinct())
            {
                try { File.WriteAllText(original, task); } catch (Exception e) when (e is IOException or UnauthorizedAccessException) { /* the thread has exited */ }
            }
            try { Directory.Delete(limited); } catch (Exception e) when (e is IOException or UnauthorizedAccessException) { context.Note($"The temporary cgroup {limited} could not be removed: {e.Message}"); }
        }
    }

    private static string? ThreadId()
    {
        try
        {
            // /proc/thread-self links to <pid>/task/<tid>.
            return new DirectoryInfo("/proc/thread-self").LinkTarget is { } target ? Path.GetFileName(target) : null;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }

    private static IEnumerable<string> ReadLines(string path)
    {
        try
        {
            return File.ReadAllLines(path).Where(l => l.Length > 0).ToArray();
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return [];
        }
    }

    /// <inheritdoc/>
    public override void RunChild(string key, IReadOnlyList<string> arguments, ExperimentContext context)
    {
        if (key != "measure" || arguments.Count == 0) base.RunChild(key, arguments, context);
        string label = arguments[0];
        if (label == RestrictedAfterStart)
        {
            int cpu = int.Parse(arguments[1], CultureInfo.InvariantCulture);
            int failures = 0;
            foreach (int tid in ThreadIds())
            {
                if (LinuxNative.SetAffinity(tid, [cpu]) != 0) failures++;
            }
            if (failures > 0) context.Note($"{failures} thread(s) could not be restricted (they may have exited).");
        }
        var reading = PlatformProcessors.Read();
        RecordFigures(context, label, reading);
        context.SetText("reading", reading.ToString());
        context.SetValue("environmentProcessorCount", reading.EnvironmentProcessorCount);
        context.SetValue("availableCount", reading.AvailableCount);
        if (reading.AffinityCount is int a) context.SetValue("affinityCount", a);
    }

    private static void RecordFigures(ExperimentContext context, string process, PlatformProcessors p)
    {
        var parameters = Parameters.Of(("process", process));
        void Add(string variant, double value) => context.RecordSamples(variant, "processors", [value], parameters, lowerIsBetter: false);
        Add(EnvironmentCount, p.EnvironmentProcessorCount);
        if (p.AffinityCount is int affinity) Add(Affinity, affinity);
        if (p.CpuQuota is double quota) Add(Quota, quota);
        Add(Available, p.AvailableCount);
        if (p.InstalledCount is int installed) Add(Installed, installed);
    }

    private static void Keep(ExperimentContext context, ChildOutput child, List<IReadOnlyList<string>> rows)
    {
        foreach (var m in child.Measurements) context.Record(m);
        foreach (string note in child.Notes) context.Note(note);
        string label = child.Measurements.FirstOrDefault()?.Parameters.GetValueOrDefault("process") ?? "child";
        double Value(string name) => child.Values.TryGetValue(name, out double v) ? v : double.NaN;
        rows.Add([label, Fmt(Value("environmentProcessorCount")), Fmt(Value("affinityCount")),
            child.Measurements.FirstOrDefault(m => m.Variant == Quota)?.Statistics.Median.ToString("0.###", CultureInfo.InvariantCulture) ?? "none",
            Fmt(Value("availableCount")), child.Machine?.AffinityMask ?? "?"]);
    }

    private static IReadOnlyList<string> Row(string label, PlatformProcessors p)
        => [label, p.EnvironmentProcessorCount.ToString(CultureInfo.InvariantCulture), p.AffinityCount?.ToString(CultureInfo.InvariantCulture) ?? "?",
            p.CpuQuota?.ToString("0.###", CultureInfo.InvariantCulture) ?? "none", p.AvailableCount.ToString(CultureInfo.InvariantCulture),
            MachineInfo.Current().AffinityMask ?? "?"];

    private static ResultTable Table(List<IReadOnlyList<string>> rows)
        => new("What each process may use", ["process", EnvironmentCount, Affinity, Quota, Available, "process mask"], rows);

    private static string Fmt(double value) => double.IsNaN(value) ? "?" : value.ToString("0", CultureInfo.InvariantCulture);

    private static HashSet<int> ThreadIds()
    {
        var ids = new HashSet<int>();
        try
        {
            foreach (string dir in Directory.GetDirectories("/proc/self/task"))
            {
                if (int.TryParse(Path.GetFileName(dir), NumberStyles.None, CultureInfo.InvariantCulture, out int tid)) ids.Add(tid);
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // No thread list: nothing to restore or restrict.
        }
        return ids;
    }
}
