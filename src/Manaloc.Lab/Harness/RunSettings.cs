namespace Manaloc.Lab.Harness;

/// <summary>How thoroughly a run measures.</summary>
public enum RunMode
{
    /// <summary>For tests: proves an experiment runs end to end; its figures mean little.</summary>
    Smoke,
    /// <summary>Every experiment in seconds per launch, the whole suite (3 launches each, 2 where an experiment declares <see cref="Experiment.QuickLaunches"/>) within five minutes on 2 cores (the default).</summary>
    Quick,
    /// <summary>Longer warm-up, more and longer samples, larger sizes.</summary>
    Full,
}

/// <summary>How long and how often the harness measures, and which thread counts a sweep visits.</summary>
public sealed record RunSettings
{
    /// <summary>How thoroughly this run measures.</summary>
    public required RunMode Mode { get; init; }
    /// <summary>Time spent running a body before any sample counts (tiered JIT, caches, pools).</summary>
    public TimeSpan WarmUp { get; init; }
    /// <summary>Target duration of one sample; the harness calibrates the operation count to it.</summary>
    public TimeSpan SampleTarget { get; init; }
    /// <summary>Samples per measurement in each launch.</summary>
    public int Samples { get; init; }
    /// <summary>
    /// Launches: the processes each experiment runs in, one after another (see <see cref="Harness.Launches"/>). One runs the
    /// experiment in this process (smoke mode, tests); more run it whole in that many fresh child processes.
    /// </summary>
    public int Launches { get; init; } = 1;
    /// <summary>
    /// True when the command line chose <see cref="Launches"/> (<c>--launches</c>): every experiment then runs that many,
    /// including one that takes fewer in quick mode (<see cref="Experiment.QuickLaunches"/>).
    /// </summary>
    public bool LaunchesGiven { get; init; }
    /// <summary>
    /// This process's launch, from 0 (0 also when the experiment runs in one process): for work that the launches need
    /// not repeat, such as a figure that does not vary between processes or a fill too costly to make three times.
    /// </summary>
    public int Launch { get; init; }
    /// <summary>
    /// Whether this launch measures the figures that no target, claim or headline reads: every launch outside quick mode;
    /// in quick mode the last launch only, so those figures stay in the report's tables (from that one process) without
    /// costing every launch.
    /// </summary>
    public bool MeasuresUnjudged => Mode != RunMode.Quick || Launch == Launches - 1;
    /// <summary>
    /// Whether this launch's notes and tables reach the report: the first launch's only, in every mode (<see cref="Harness.Launches.Merge"/>
    /// keeps the first launch's and drops the others', which say the same with other figures). Work whose only output is a
    /// note or a table (not a measurement) runs where this is true and nowhere else. A child an experiment starts from its
    /// launch is not told the launch's index, so the launch passes this on in the child's arguments.
    /// </summary>
    public bool ReportsNotesAndTables => Launch == 0;
    /// <summary>Thread counts a sweep visits.</summary>
    public IReadOnlyList<int> ThreadCounts { get; init; } = DefaultThreadCounts(Environment.ProcessorCount);
    /// <summary>True in quick and smoke mode: experiments pick their smaller sizes.</summary>
    public bool IsQuick => Mode is RunMode.Quick or RunMode.Smoke;
    /// <summary>True in smoke mode (tests): experiments pick their smallest sizes and fewest variants' repetitions.</summary>
    public bool IsSmoke => Mode == RunMode.Smoke;

    /// <summary>
    /// One launch's share of <paramref name="total"/> repetitions (at least one): for work whose samples pool across
    /// launches (full collections, GC pauses for a p99), so that more launches do not cost more time.
    /// </summary>
    public int PerLaunch(int total) => Math.Max(1, (total + Launches - 1) / Launches);

    /// <summary>The value for this run's mode: one place per size instead of a chain of mode tests.</summary>
    public T Pick<T>(T smoke, T quick, T full) => Mode switch
    {
        RunMode.Smoke => smoke,
        RunMode.Quick => quick,
        _ => full,
    };

    /// <summary>Settings for <paramref name="mode"/>.</summary>
    public static RunSettings For(RunMode mode, IReadOnlyList<int>? threads = null) => mode switch
    {
        RunMode.Smoke => Smoke(threads),
        RunMode.Full => Full(threads),
        _ => Quick(threads),
    };

    /// <summary>The mode's name on the command line and in results.json: <c>smoke</c>, <c>quick</c>, <c>full</c>.</summary>
    public static string NameOf(RunMode mode) => mode.ToString().ToLowerInvariant();

    /// <summary>Quick mode: 3 launches of every experiment (2 where it declares <see cref="Experiment.QuickLaunches"/>), the whole suite within five minutes on 2 cores.
    /// A 50 ms warm-up per measurement in a lab child (200 ms elsewhere), then eight short samples per launch rather than a few long ones, 24 in all: enough for p10/p90 and a bootstrap
    /// interval, and for each launch's own interval, against which launches that disagree are found.</summary>
    /// <remarks>
    /// The warm-up outlasts the runtime's tiering delay. By default tiered compilation starts counting
    /// calls only after 100 ms without new tier-0 code, and every measurement jits new code (its body),
    /// so a shorter warm-up measures tier-0 callees: 200 ms leaves time for the tier-1 rejit. Every lab
    /// child (each launch) runs with that delay at 0 (<see cref="ChildProcess.CallCountingDelayVariable"/>),
    /// so calls count from the start: a body's callees reach the same tier-1 code within the calibration's first
    /// milliseconds (the body itself runs on-stack-replaced optimised code, as it did after 200 ms), and 50 ms of
    /// full samples settle caches, pools and the background compiles.
    /// </remarks>
    public static RunSettings Quick(IReadOnlyList<int>? threads = null) => new()
    {
        Mode = RunMode.Quick,
        WarmUp = TimeSpan.FromMilliseconds(CallsCountedFromStart ? 50 : 200),
        SampleTarget = TimeSpan.FromMilliseconds(8),
        Samples = 8,
        Launches = 3,
        ThreadCounts = threads ?? DefaultThreadCounts(Environment.ProcessorCount),
    };

    /// <summary>True when this process's tiered compilation counts calls from the start (<see cref="ChildProcess.CallCountingDelayVariable"/> is 0).</summary>
    public static bool CallsCountedFromStart { get; } = Environment.GetEnvironmentVariable(ChildProcess.CallCountingDelayVariable) == "0";

    /// <summary>
    /// How long an experiment's own JIT warm-up (a few dozen calls of every body) pauses so that the hot methods'
    /// tier-1 code is installed before it measures: the runtime's 100 ms call-counting delay and the compile (150 ms)
    /// by default, the compile alone (30 ms) where calls count from the start (every lab child).
    /// </summary>
    public static TimeSpan TierUpPause { get; } = TimeSpan.FromMilliseconds(CallsCountedFromStart ? 30 : 150);

    /// <summary>Smoke mode, for tests: proves an experiment runs end to end; its figures mean little.</summary>
    public static RunSettings Smoke(IReadOnlyList<int>? threads = null) => new()
    {
        Mode = RunMode.Smoke,
        WarmUp = TimeSpan.FromMilliseconds(1),
        SampleTarget = TimeSpan.FromMilliseconds(1),
        Samples = 2,
        ThreadCounts = threads ?? [1, 2],
    };

    /// <summary>Full mode: longer warm-up, more and longer samples.</summary>
    public static RunSettings Full(IReadOnlyList<int>? threads = null) => new()
    {
        Mode = RunMode.Full,
        WarmUp = TimeSpan.FromMilliseconds(1000),
        SampleTarget = TimeSpan.FromMilliseconds(100),
        Samples = 10,
        Launches = 5,
        ThreadCounts = threads ?? DefaultThreadCounts(Environment.ProcessorCount),
    };

    /// <summary>1, the powers of two below the processor count, the processor count, and twice it (oversubscription).</summary>
    public static IReadOnlyList<int> DefaultThreadCounts(int processors)
    {
        var counts = new SortedSet<int> { 1, Math.Max(1, processors), Math.Max(2, 2 * processors) };
        for (int n = 2; n < processors; n *= 2)
        {
            counts.Add(n);
        }
        return counts.ToArray();
    }

    /// <summary>Parses a thread list such as <c>1,2,4</c>.</summary>
    /// <exception cref="FormatException">The text is not a comma-separated list of integers in [1, 1024].</exception>
    public static IReadOnlyList<int> ParseThreadCounts(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        var parts = text.Split(',', StringSplitOptions.TrimEntries);
        var counts = new SortedSet<int>();
        foreach (string part in parts)
        {
            if (!int.TryParse(part, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out int n) || n < 1 || n > 1024)
            {
                throw new FormatException($"--threads expects a comma-separated list of whole numbers from 1 to 1024, like 1,2,4; '{part}' in '{text}' is not one.");
            }
            counts.Add(n);
        }
        return counts.ToArray();
    }
}
