using Manaloc.Lab.Platform;
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
        int error = LabNative.SetAffinity(0, [cpu]);
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
            LabNative.SetAffinity(0, originalCpus);
            foreach (int tid in ThreadIds())
            {
                // A thread created while this one was pinned inherited the pin; give it the process's mask back.
                if (!threadsBefore.Contains(tid) && LinuxNative.GetAffinity(tid, out _) is { } mask && AffinityMask.ToProcessors(mask) is [int only] && only == cpu)
                {
                    LabNative.SetAffinity(tid, originalCpus);
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
                if (LabNative.SetAffinity(tid, [cpu]) != 0) failures++;
            }
            if (failures > 0) context.Note($"{Format.Count(failures, "thread")} could not be restricted (they may have exited).");
        }
        var reading = PlatformProcessors.Read();
        RecordFigures(context, label, reading);
        context.SetText("reading", reading.ToString());
        context.SetValue("environmentProcessorCount", reading.EnvironmentProcessorCount);
        context.SetValue("availableCount", reading.AvailableCount);
        if (reading.AffinityCount is int a) context.SetValue("affinityCount", a);
    }
}
