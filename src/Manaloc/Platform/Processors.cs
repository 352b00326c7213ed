using System.Globalization;
using System.Runtime.InteropServices;

namespace Manaloc.Platform;

/// <summary>
/// What this process may really use: the processors in its affinity mask, the cgroup CPU quota
/// as a processor count, the cache line size, and <see cref="Environment.ProcessorCount"/> beside
/// them. <see cref="AvailableCount"/> is the figure to size thread pools and partitions by.
/// </summary>
/// <remarks>
/// <para>
/// Why: the number of processors installed is not the number a process may run on. A user or a
/// container runtime restricts a process with an affinity mask (<c>taskset</c>, <c>start /affinity</c>)
/// or a CPU quota (<c>docker --cpus</c>, Kubernetes limits); sizing by the installed count then
/// oversubscribes and pays for context switches. .NET's <see cref="Environment.ProcessorCount"/>
/// honours the mask and quota it saw at start-up, is rounded, can be overridden with
/// <c>DOTNET_PROCESSOR_COUNT</c>, and does not follow a mask changed later; this type reads the
/// sources themselves and reports each one.
/// </para>
/// <para>
/// Sources: on Linux, <c>sched_getaffinity</c> for the calling thread, <c>/proc/self/cgroup</c>,
/// <c>/proc/self/mountinfo</c> and the cgroup v2 <c>cpu.max</c> or v1 <c>cpu.cfs_quota_us</c> /
/// <c>cpu.cfs_period_us</c> files of the process's cgroup and its ancestors,
/// <c>/sys/devices/system/cpu/online</c> and <c>/sys/devices/system/cpu/cpu0/cache/index*/coherency_line_size</c>.
/// On Windows, the process affinity mask of its processor group (or, when the process spans
/// several groups, every active processor of those groups) and <c>GetLogicalProcessorInformation</c>;
/// job-object CPU rate limits are not read. Elsewhere, <see cref="Environment.ProcessorCount"/>.
/// Nothing needs privileges.
/// </para>
/// <para>
/// Failure: a missing or unreadable file, or a failing system call, means "no limit from that
/// source" and never throws; content that cannot be parsed is listed in <see cref="Problems"/> and
/// that source is ignored rather than guessed.
/// </para>
/// <para>Thread safety: an instance is an immutable snapshot, safe to share. <see cref="Current"/>
/// is read once per process; call <see cref="Read()"/> for a fresh reading.</para>
/// </remarks>
public sealed partial class Processors
{
    private static readonly Lazy<Processors> s_current = new(Read, LazyThreadSafetyMode.ExecutionAndPublication);

    private Processors()
    {
    }

    /// <summary>The reading taken the first time this property is used, shared by Manaloc's components.</summary>
    /// <remarks>Thread-safe; read once. A later affinity or quota change is not seen: use <see cref="Read()"/>.</remarks>
    public static Processors Current => s_current.Value;

    /// <summary><see cref="Environment.ProcessorCount"/> at the time of reading.</summary>
    /// <remarks>The runtime fixes this at start-up from the mask and quota it saw then (or from <c>DOTNET_PROCESSOR_COUNT</c>).</remarks>
    public int EnvironmentProcessorCount { get; private init; }

    /// <summary>Processors online on the machine, where the operating system says; otherwise null.</summary>
    public int? InstalledCount { get; private init; }

    /// <summary>Processor numbers in the affinity mask, ascending; null when it could not be read.</summary>
    /// <remarks>On Windows a processor is numbered <c>group * 64 + bit</c>.</remarks>
    public IReadOnlyList<int>? AffinityProcessors { get; private init; }

    /// <summary>Processors in the affinity mask, or null when it could not be read.</summary>
    public int? AffinityCount => AffinityProcessors?.Count;

    /// <summary>The cgroup CPU quota in processors (quota / period, e.g. 1.5), or null when there is none.</summary>
    public double? CpuQuota { get; private init; }

    /// <summary>The file that set <see cref="CpuQuota"/>, or null.</summary>
    public string? CpuQuotaSource { get; private init; }

    /// <summary><c>v1</c> or <c>v2</c> when a cgroup CPU controller was found, else null.</summary>
    public string? CgroupVersion { get; private init; }

    /// <summary><see cref="CpuQuota"/> rounded up to whole processors (at least 1), or null when there is no quota.</summary>
    /// <remarks>Rounded up, as the runtime does: a 1.5-processor quota still lets two threads run at once, each for part of the period.</remarks>
    public int? QuotaCount => CpuQuota is double q ? Math.Max(1, (int)Math.Ceiling(q - 1e-9)) : null;

    /// <summary>
    /// Processors this process may use at once: the affinity count (or
    /// <see cref="EnvironmentProcessorCount"/> when the mask is unknown), lowered to
    /// <see cref="QuotaCount"/>; at least 1.
    /// </summary>
    /// <remarks><c>DOTNET_PROCESSOR_COUNT</c> does not change this figure; it changes <see cref="EnvironmentProcessorCount"/> only.</remarks>
    public int AvailableCount
    {
        get
        {
            int count = AffinityCount ?? EnvironmentProcessorCount;
            if (QuotaCount is int quota) count = Math.Min(count, quota);
            return Math.Max(1, count);
        }
    }

    /// <summary>The coherency line size in bytes as the system reports it, or 64 when it does not.</summary>
    public int CacheLineSize { get; private init; }

    /// <summary>True when <see cref="CacheLineSize"/> came from the system rather than the default.</summary>
    public bool CacheLineSizeReported { get; private init; }

    /// <summary>
    /// The distance that keeps two independently written fields from slowing each other: 128 bytes
    /// on x86, x64 and Arm64 (at least <see cref="CacheLineSize"/>), else <see cref="CacheLineSize"/>.
    /// </summary>
    /// <remarks>
    /// x86 processors fetch cache lines in adjacent pairs (the spatial prefetcher), so fields 64 bytes
    /// apart can still interfere; several Arm64 cores have 128-byte lines. The runtime pads its own
    /// contended fields to 128 bytes on these architectures for the same reason.
    /// </remarks>
    public int FalseSharingPadding { get; private init; }

    /// <summary>Content that could not be parsed (file and text), each ignored rather than guessed; empty when all was well.</summary>
    public IReadOnlyList<string> Problems { get; private init; } = [];

    /// <summary>Takes a fresh reading for this process.</summary>
    /// <remarks>Never throws for missing files or failed system calls; see <see cref="Problems"/>.</remarks>
    public static Processors Read()
    {
        if (OperatingSystem.IsWindows())
        {
            return ReadWindows();
        }
        if (OperatingSystem.IsLinux())
        {
            return Read(ProcessorProbe.ForThisLinuxProcess());
        }
        return new Processors
        {
            EnvironmentProcessorCount = Environment.ProcessorCount,
            CacheLineSize = DefaultCacheLineSize(),
            FalseSharingPadding = Padding(DefaultCacheLineSize()),
        };
    }

    /// <summary>One line: every figure and the problems, for logs and the lab.</summary>
    public override string ToString()
    {
        var text = new System.Text.StringBuilder();
        text.Append(CultureInfo.InvariantCulture, $"available {AvailableCount}; Environment.ProcessorCount {EnvironmentProcessorCount}");
        text.Append(CultureInfo.InvariantCulture, $"; installed {InstalledCount?.ToString(CultureInfo.InvariantCulture) ?? "?"}");
        text.Append(CultureInfo.InvariantCulture, $"; affinity {AffinityCount?.ToString(CultureInfo.InvariantCulture) ?? "?"}");
        text.Append(CpuQuota is double q ? string.Create(CultureInfo.InvariantCulture, $"; cgroup {CgroupVersion} quota {q:0.###}") : "; no cgroup quota");
        text.Append(CultureInfo.InvariantCulture, $"; cache line {CacheLineSize} B{(CacheLineSizeReported ? "" : " (default)")}, padding {FalseSharingPadding} B");
        if (Problems.Count > 0) text.Append(CultureInfo.InvariantCulture, $"; {Plural.Of(Problems.Count, "problem")}: {string.Join(" | ", Problems)}");
        return text.ToString();
    }

    private static int DefaultCacheLineSize()
        => OperatingSystem.IsMacOS() && RuntimeInformation.ProcessArchitecture == Architecture.Arm64 ? 128 : 64;

    private static int Padding(int cacheLine, Architecture? architecture = null)
        => (architecture ?? RuntimeInformation.ProcessArchitecture) is Architecture.X86 or Architecture.X64 or Architecture.Arm64
            ? Math.Max(128, cacheLine)
            : cacheLine;
}
