using System.Globalization;
using Manaloc.Lab.Platform;

namespace Manaloc.Lab.Harness;

/// <summary>
/// Where a measurement's threads ran: the CPUs each was seen on (sampled with <c>sched_getcpu</c> at the end of
/// every measured round) and whether two of them shared a CPU or a core. Two launches of one experiment can
/// place their threads differently (both on one vCPU, on SMT siblings, on two cores), which changes what
/// false sharing or a ping-pong costs; the report shows it beside launches that disagree.
/// </summary>
public sealed record Placement
{
    /// <summary>Per thread, the CPUs it was seen on, the most frequent first.</summary>
    public IReadOnlyList<IReadOnlyList<int>> ThreadCpus { get; init; } = [];

    /// <summary>True when two threads ran mostly on the same CPU (they time-shared it).</summary>
    public bool SharedCpu { get; init; }

    /// <summary>True when two threads ran mostly on SMT siblings of one core; null when the topology is unknown.</summary>
    public bool? SmtSiblings { get; init; }

    /// <summary>True when a thread was seen on more than one CPU (the scheduler moved it).</summary>
    public bool Moved { get; init; }

    /// <summary>
    /// One placement for several rounds measured apart (<see cref="Rounds.Merge"/>): per thread, the CPUs seen, the
    /// one it ran on in most rounds first; shared CPU and SMT siblings as in most rounds; moved when any round moved a
    /// thread or rounds put it on different CPUs. Null when no round recorded one.
    /// </summary>
    public static Placement? Combine(IReadOnlyList<Placement?> rounds)
    {
        ArgumentNullException.ThrowIfNull(rounds);
        var known = rounds.Where(p => p is not null).Select(p => p!).ToArray();
        if (known.Length == 0) return null;
        int threads = known.Min(p => p.ThreadCpus.Count);
        var perThread = new IReadOnlyList<int>[threads];
        bool moved = known.Any(p => p.Moved);
        for (int t = 0; t < threads; t++)
        {
            var main = known.Select(p => p.ThreadCpus[t][0]).ToArray();
            moved |= main.Distinct().Count() > 1;
            perThread[t] = main.GroupBy(c => c).OrderByDescending(g => g.Count()).ThenBy(g => g.Key).Select(g => g.Key)
                .Concat(known.SelectMany(p => p.ThreadCpus[t])).Distinct().ToArray();
        }
        int siblings = known.Count(p => p.SmtSiblings == true);
        return new Placement
        {
            ThreadCpus = perThread,
            SharedCpu = 2 * known.Count(p => p.SharedCpu) > known.Length,
            SmtSiblings = known.All(p => p.SmtSiblings is null) ? null : 2 * siblings > known.Length,
            Moved = moved,
        };
    }

    /// <summary>"CPUs 0|1", "CPUs 0|0 (one CPU)", "CPUs 0,1|1 (moved)": each thread's CPUs, separated by bars.</summary>
    public override string ToString()
    {
        string cpus = string.Join('|', ThreadCpus.Select(t => string.Join(',', t.Select(c => c.ToString(CultureInfo.InvariantCulture)))));
        var marks = new List<string>();
        if (SharedCpu) marks.Add("one CPU");
        else if (SmtSiblings == true) marks.Add("SMT siblings");
        if (Moved) marks.Add("moved");
        return marks.Count == 0 ? $"CPUs {cpus}" : $"CPUs {cpus} ({string.Join(", ", marks)})";
    }
}

/// <summary>
/// Collects each measuring thread's CPU, one sample per round, and summarises them as a <see cref="Placement"/>.
/// </summary>
/// <remarks>
/// Thread-safety: each thread writes only its own list (<see cref="Sample"/> with its own index); <see cref="Build"/>
/// reads them all and must run after the threads' last <see cref="Sample"/> is ordered before it (a barrier or a
/// join does that), so no lock is needed.
/// </remarks>
public sealed class PlacementRecorder
{
    private readonly List<int>[] _seen;

    /// <summary>A recorder for <paramref name="threads"/> threads.</summary>
    public PlacementRecorder(int threads)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(threads);
        _seen = new List<int>[threads];
        for (int i = 0; i < threads; i++) _seen[i] = [];
    }

    /// <summary>Records the CPU thread <paramref name="thread"/> runs on now; call it from that thread.</summary>
    public void Sample(int thread)
    {
        if (LabNative.CurrentCpu() is { } cpu) _seen[thread].Add(cpu);
    }

    /// <summary>The placement seen so far; null when no CPU could be read (not Linux) or nothing was sampled.</summary>
    public Placement? Build()
    {
        if (_seen.Any(s => s.Count == 0)) return null;
        var perThread = _seen.Select(s => (IReadOnlyList<int>)s.GroupBy(c => c).OrderByDescending(g => g.Count()).ThenBy(g => g.Key).Select(g => g.Key).ToArray()).ToArray();
        var main = perThread.Select(t => t[0]).ToArray();
        bool shared = main.Distinct().Count() < main.Length;
        bool? siblings = null;
        if (CpuTopology.SiblingsOf(main[0]) is not null)
        {
            siblings = false;
            for (int a = 0; a < main.Length && siblings == false; a++)
            {
                for (int b = a + 1; b < main.Length; b++)
                {
                    if (main[a] != main[b] && CpuTopology.SiblingsOf(main[a]) is { } s && s.Contains(main[b])) { siblings = true; break; }
                }
            }
        }
        return new Placement { ThreadCpus = perThread, SharedCpu = shared, SmtSiblings = siblings, Moved = perThread.Any(t => t.Count > 1) };
    }
}

/// <summary>The machine's SMT siblings, read from <c>/sys/devices/system/cpu/cpu*/topology/thread_siblings_list</c>.</summary>
public static class CpuTopology
{
    private static readonly Lazy<IReadOnlyDictionary<int, IReadOnlyList<int>>?> Siblings = new(Read);

    /// <summary>The CPUs that share <paramref name="cpu"/>'s core (itself included); null when the topology is unknown.</summary>
    public static IReadOnlyList<int>? SiblingsOf(int cpu)
        => Siblings.Value is { } map && map.TryGetValue(cpu, out var list) ? list : null;

    /// <summary>
    /// The sibling groups as the report shows them: "0-1, 2-3" when cores hold two CPUs each, "none" when every
    /// CPU is a core of its own; null when the topology is unknown (not Linux, no /sys).
    /// </summary>
    public static string? Describe()
    {
        if (Siblings.Value is not { } map) return null;
        var groups = map.Values.Where(g => g.Count > 1).Select(g => string.Join('-', g)).Distinct().ToArray();
        return groups.Length == 0 ? "none" : string.Join(", ", groups);
    }

    /// <summary>Parses a kernel CPU list such as <c>0-1,4</c>.</summary>
    /// <exception cref="FormatException">The text is not a CPU list.</exception>
    public static IReadOnlyList<int> ParseCpuList(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        var cpus = new SortedSet<int>();
        foreach (string part in text.Trim().Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            var ends = part.Split('-');
            if (ends.Length is < 1 or > 2 || !ends.All(e => int.TryParse(e, NumberStyles.None, CultureInfo.InvariantCulture, out _)))
            {
                throw new FormatException($"'{text}' is not a CPU list like 0-1,4.");
            }
            int from = int.Parse(ends[0], CultureInfo.InvariantCulture), to = int.Parse(ends[^1], CultureInfo.InvariantCulture);
            for (int c = from; c <= to; c++) cpus.Add(c);
        }
        return cpus.ToArray();
    }

    private static IReadOnlyDictionary<int, IReadOnlyList<int>>? Read()
    {
        const string root = "/sys/devices/system/cpu";
        try
        {
            if (!OperatingSystem.IsLinux() || !Directory.Exists(root)) return null;
            var map = new Dictionary<int, IReadOnlyList<int>>();
            foreach (string dir in Directory.EnumerateDirectories(root, "cpu*"))
            {
                string name = Path.GetFileName(dir);
                if (!int.TryParse(name.AsSpan(3), NumberStyles.None, CultureInfo.InvariantCulture, out int cpu)) continue;
                string file = Path.Combine(dir, "topology", "thread_siblings_list");
                if (File.Exists(file)) map[cpu] = ParseCpuList(File.ReadAllText(file));
            }
            return map.Count == 0 ? null : map;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or FormatException)
        {
            return null;
        }
    }
}
