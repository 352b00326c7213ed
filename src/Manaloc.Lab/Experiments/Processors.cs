using Manaloc.Platform;
using PlatformProcessors = Manaloc.Platform.Processors;

namespace Manaloc.Lab.Experiments;

/// <summary>
/// Seed 000, "Don't Rely on Environment.ProcessorCount": in 2010 ProcessorCount reported the
/// installed processors and ignored the affinity mask. Today: this process's figures, then child
/// processes restricted several ways — started with a one-processor mask (as <c>taskset -c N</c>
/// would), restricted after start, told <c>DOTNET_PROCESSOR_COUNT=1</c>, and, where the machine
/// allows creating a cgroup, started under a CPU quota — each reporting what
/// <see cref="Environment.ProcessorCount"/> says beside what <see cref="PlatformProcessors"/> reads.
/// </summary>
/// <remarks>
/// The harness starts a child as <c>dotnet exec Manaloc.Lab.dll child …</c> and cannot be wrapped in
/// <c>taskset</c>. On Linux, affinity belongs to a thread and fork/exec copies the forking thread's
/// mask, so the parent pins the thread that starts the child to one processor for the duration of
/// <c>RunChild</c>: the child's runtime starts with that mask exactly as under <c>taskset</c>. The
/// parent then restores its thread's mask, and any thread the runtime created meanwhile (which would
/// have inherited the pin) is given the original mask back.
/// </remarks>
public sealed partial class Processors() : Experiment(
    "processors", "Don't Rely on Environment.ProcessorCount (seed 000)",
    "Environment.ProcessorCount beside the affinity mask and cgroup quota, here and in child processes restricted three ways.",
    [EnvironmentCount, Affinity, Quota, Available, Installed], EnvironmentCount, quickSeconds: 2, quickLaunches: 2)
{
    internal const string StartedRestricted = "started-on-1-cpu";
    internal const string RestrictedAfterStart = "pinned-after-start";
    internal const string CountOverride = "count-override";
    internal const string ThisProcess = "this";
    internal const string UnderQuota = "cpu-quota";

    private const string EnvironmentCount = "Environment.ProcessorCount";
    private const string Affinity = "affinity mask";
    private const string Quota = "cgroup quota";

    /// <summary>Environment variable that allows the experiment to create a temporary cgroup for the quota child.</summary>
    internal const string AllowCgroupVariable = "MANALOC_LAB_CGROUP";
    private const string Available = "Processors.AvailableCount";
    private const string Installed = "installed";

    /// <inheritdoc/>
    /// <remarks>Not measured (not comparable) when this process may use one processor only: a one-processor restriction then changes nothing.</remarks>
    public override Claim Claim => new("Environment.ProcessorCount returned the installed processors and ignored the process's affinity mask (.NET 4, Windows)", null,
        new Metric("ProcessorCount vs the processors a child started on a smaller mask may use", Unit.Ratio, f =>
            f.Median(Available, In(ThisProcess)) is > 1 ? f.Median(EnvironmentCount, In(StartedRestricted)) / f.Median(Available, In(StartedRestricted)) : null));

    private static Func<Measurement, bool> In(string process) => m => m.Parameters.Is("process", process);
    /// <inheritdoc/>
    /// <remarks>1x is the right count: the processors this process may run on.</remarks>
    public override Headline Headline => new(
        new Metric("Processors.AvailableCount ÷ processors the affinity mask allows, process pinned to one processor after start (1x = right)", Unit.Ratio,
            f => f.Median(Available, In(RestrictedAfterStart)) / f.Median(Affinity, In(RestrictedAfterStart))),
        new Metric("Environment.ProcessorCount, the same", Unit.Ratio, f => f.Median(EnvironmentCount, In(RestrictedAfterStart)) / f.Median(Affinity, In(RestrictedAfterStart))));

    /// <inheritdoc/>
    public override IReadOnlyList<ParameterSpec> DescribeParameters(RunSettings settings) =>
    [
        new("process", "which process reports: this one, or a child restricted one way",
            settings.IsSmoke ? [ThisProcess, StartedRestricted] : [ThisProcess, CountOverride, StartedRestricted, RestrictedAfterStart, UnderQuota]),
    ];

    /// <inheritdoc/>
    public override void Run(ExperimentContext context)
    {
        var here = PlatformProcessors.Read();
        RecordFigures(context, ThisProcess, here);
        var rows = new List<IReadOnlyList<string>> { Row(ThisProcess, here) };
        foreach (string problem in here.Problems) context.Note($"Problem reading this process's figures: {problem}");

        if (!OperatingSystem.IsLinux() || here.AffinityProcessors is not { Count: > 0 } cpus)
        {
            context.Note("Child processes restricted by affinity are run on Linux only (the thread-inherited mask is a Linux property); skipped.");
            context.AddTable(Table(rows));
            return;
        }
        int cpu = cpus[0];
        if (!context.IsSmoke)
        {
            // Unpinned first: the runtime's process-start machinery (signal and I/O threads) is then created with the full mask.
            var overridden = context.RunChild("measure", [CountOverride], new Dictionary<string, string?> { ["DOTNET_PROCESSOR_COUNT"] = "1" });
            Keep(context, overridden, rows);
        }
        Keep(context, RunStartedRestricted(context, cpu), rows);
        if (!context.IsSmoke)
        {
            Keep(context, context.RunChild("measure", [RestrictedAfterStart, cpu.ToString(CultureInfo.InvariantCulture)]), rows);
            double quota = Math.Max(0.5, Math.Floor(cpus.Count / 2.0));
            if (RunUnderQuota(context, quota, out string? skipped) is { } limited)
            {
                Keep(context, limited, rows);
                context.Note($"'{UnderQuota}': the child was started from a thread placed in a temporary cgroup v1 with a {quota:0.#}-processor quota (cpu.cfs_quota_us / cpu.cfs_period_us); the cgroup was removed afterwards. This needs a writable cgroup (here: privileges); Processors itself only reads.");
            }
            else
            {
                context.Note($"No CPU-quota child: {skipped}. Processors reads cpu.max / cpu.cfs_quota_us when a quota exists; the library tests cover it with synthetic files.");
            }
        }
        context.AddTable(Table(rows));
        context.Note($"'{StartedRestricted}': the parent pinned the thread that starts the child to processor {cpu}; fork/exec copies that mask, as 'taskset -c {cpu}' would. The child's runtime sizes itself from it at start-up.");
        context.Note($"'{RestrictedAfterStart}': the child set every one of its threads to processor {cpu} after the runtime started; Environment.ProcessorCount was fixed at start-up and does not follow.");
        context.Note($"'{CountOverride}': the child ran with DOTNET_PROCESSOR_COUNT=1; only the runtime's view changes; the mask still allows {Format.Count(cpus.Count, "processor")}.");
        context.Note($"Cache line: {here.CacheLineSize} B{(here.CacheLineSizeReported ? " as reported by the system" : " (default: not reported)")}; padding against false sharing: {here.FalseSharingPadding} B (x86 prefetches adjacent line pairs).");
    }
}
