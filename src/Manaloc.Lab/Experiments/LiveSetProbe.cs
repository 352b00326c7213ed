using System.Diagnostics;
using System.Globalization;
using System.Runtime;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Experiments;

/// <summary>What the <c>live-set</c> parent asks one child process to measure, and its form on the command line.</summary>
/// <param name="Variant">One of <see cref="LiveSetSubject.All"/>.</param>
/// <param name="Records">Live records.</param>
/// <param name="ChurnRounds">Rounds of the churn phase, each replacing a tenth of the set.</param>
internal sealed record LiveSetPlan(string Variant, int Records, int ChurnRounds)
{
    /// <summary>The plan as the child's arguments.</summary>
    public IReadOnlyList<string> ToArguments()
        => [Variant, Records.ToString(CultureInfo.InvariantCulture), ChurnRounds.ToString(CultureInfo.InvariantCulture)];

    /// <summary>Reads a plan back from <see cref="ToArguments"/>'s form.</summary>
    /// <exception cref="ArgumentException">Not three arguments, an unknown variant, or a count that is not a positive whole number.</exception>
    public static LiveSetPlan Parse(IReadOnlyList<string> arguments)
    {
        ArgumentNullException.ThrowIfNull(arguments);
        if (arguments.Count != 3)
        {
            throw new ArgumentException($"A live-set child takes 3 arguments (variant, records, churn rounds), not {arguments.Count}: '{string.Join(' ', arguments)}'.", nameof(arguments));
        }
        if (!LiveSetSubject.All.Contains(arguments[0]))
        {
            throw new ArgumentException($"Unknown live-set variant '{arguments[0]}'; known: {string.Join(", ", LiveSetSubject.All)}.", nameof(arguments));
        }
        return new LiveSetPlan(arguments[0], Positive(arguments[1], "records"), Positive(arguments[2], "churn rounds"));
    }

    private static int Positive(string text, string what)
        => int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out int n) && n > 0
            ? n
            : throw new ArgumentException($"The live-set child's {what} must be a positive whole number, not '{text}'.", nameof(text));
}

/// <summary>Managed heap sizes around building a live set, each after a full blocking collection.</summary>
/// <param name="Baseline">Before anything was allocated.</param>
/// <param name="AfterContainer">After the container (array) was allocated.</param>
/// <param name="AfterRecords">After every record was created.</param>
/// <param name="Records">Records in the set.</param>
internal readonly record struct LiveSetBytes(long Baseline, long AfterContainer, long AfterRecords, int Records)
{
    /// <summary>Managed bytes the whole set holds per record (never below zero: the heap may shrink by noise).</summary>
    public double PerRecord => Math.Max(0, (double)(AfterRecords - Baseline) / Records);
    /// <summary>Of which the container's.</summary>
    public double ContainerPerRecord => Math.Max(0, (double)(AfterContainer - Baseline) / Records);
    /// <summary>Of which the records' (handles, allocator bookkeeping, objects).</summary>
    public double RecordsPerRecord => Math.Max(0, (double)(AfterRecords - AfterContainer) / Records);
}

/// <summary>
/// The pause of every garbage collection seen while it runs, from <see cref="GC.GetGCMemoryInfo(GCKind)"/>: the
/// caller polls after it sees the collection count move; each GC's pause is the sum of its pause durations (a
/// background GC has two). A GC whose information was overwritten before a poll is counted as unobserved.
/// </summary>
internal sealed class GcPauseLog(long startIndex)
{
    private readonly Dictionary<long, double> _pauses = [];
    private readonly int[] _byGeneration = new int[3];

    /// <summary>A log that counts the collections after the last one completed now.</summary>
    public static GcPauseLog StartingNow() => new(GC.GetGCMemoryInfo(GCKind.Any).Index);

    /// <summary>Pauses (ms) of the collections observed, one per GC.</summary>
    public IReadOnlyCollection<double> PausesMs => _pauses.Values;

    /// <summary>Collections observed per generation collected (0, 1, 2).</summary>
    public IReadOnlyList<int> ByGeneration => _byGeneration;

    /// <summary>Records GC <paramref name="index"/>'s pause and generation, once; a GC from before the log started is ignored.</summary>
    public void Observe(long index, double pauseMs, int generation)
    {
        if (index > startIndex && _pauses.TryAdd(index, pauseMs)) _byGeneration[Math.Clamp(generation, 0, 2)]++;
    }

    /// <summary>Reads the last GC of any kind and the last background GC (which may complete after a later ephemeral one).</summary>
    public void Poll()
    {
        foreach (var kind in new[] { GCKind.Any, GCKind.Background })
        {
            var info = GC.GetGCMemoryInfo(kind);
            double pause = 0;
            foreach (var p in info.PauseDurations) pause += p.TotalMilliseconds;
            if (info.Index > 0) Observe(info.Index, pause, info.Generation);
        }
    }

    /// <summary>Collections that ran up to GC index <paramref name="lastIndex"/> but were not observed.</summary>
    public long Unobserved(long lastIndex) => Math.Max(0, lastIndex - startIndex - _pauses.Count);
}

/// <summary>The child's side of the live-set experiment: build one representation, weigh it, collect, churn.</summary>
internal static class LiveSetProbe
{
    /// <summary>Short-lived garbage per replacement (a 64-byte array), the same in every variant.</summary>
    internal const int GarbageBytes = 40;
    private static byte[]? s_garbage;

    public static int Records(RunSettings s) => s.Pick(smoke: 20_000, quick: 1_000_000, full: 10_000_000);
    public static int ChurnRounds(RunSettings s) => s.Pick(smoke: 2, quick: 10, full: 10);
    private static int FullCollections(RunSettings s) => s.Pick(smoke: 1, quick: 3, full: 5);

    /// <summary>Builds, measures and churns the plan's representation, recording four measurements.</summary>
    public static void Run(ExperimentContext context, LiveSetPlan plan)
    {
        string gc = GCSettings.IsServerGC ? LiveSet.Server : LiveSet.Workstation; // what the runtime runs, not what was asked
        var p = Parameters.Of(("gc", gc), ("records", plan.Records));
        context.Status($"{plan.Variant}: {plan.Records} records, {gc} GC");
        WarmUp(plan.Variant);
        using var subject = LiveSetSubject.Create(plan.Variant);
        var bytes = MeasureBytes(subject, plan.Records);
        context.RecordSamples(plan.Variant, "B/record", [bytes.PerRecord], With(p, "heap"), metrics: new Dictionary<string, double>
        {
            ["containerBytesPerRecord"] = bytes.ContainerPerRecord,
            ["recordBytesPerRecord"] = bytes.RecordsPerRecord,
        });
        var (wall, paused) = MeasureFullCollections(FullCollections(context.Settings));
        context.RecordSamples(plan.Variant, "ms", wall, With(p, "full-gc"), metrics: new Dictionary<string, double>
        {
            ["totalPauseDurationMs"] = Statistics.From(paused).Median,
        });
        context.Status($"{plan.Variant}: churn, {gc} GC");
        var churn = Churn(subject, plan.ChurnRounds, context.Cancellation);
        var churnMetrics = new Dictionary<string, double>
        {
            ["gcs"] = churn.PausesMs.Count,
            ["gen0Gcs"] = churn.ByGeneration[0],
            ["gen1Gcs"] = churn.ByGeneration[1],
            ["gen2Gcs"] = churn.ByGeneration[2],
            ["unobservedGcs"] = churn.Unobserved,
            ["observedPauseMs"] = churn.PausesMs.Sum(),
            ["totalPauseDurationMs"] = churn.TotalPauseMs,
            ["replacements"] = churn.Replacements,
            ["slowestRoundPerSecond"] = churn.RatesPerSecond.Min(),
            ["fastestRoundPerSecond"] = churn.RatesPerSecond.Max(),
        };
        // One sample: every replacement over the whole phase's time. A median of per-round rates would leave out the
        // rounds that paid for a collection, which is the cost this phase exists to show.
        context.RecordSamples(plan.Variant, "replacements/s", [churn.Replacements / churn.Seconds], With(p, "churn"), lowerIsBetter: false, metrics: churnMetrics);
        // No collection at all during the churn is recorded as one pause of 0 ms, with gcs = 0 beside it.
        context.RecordSamples(plan.Variant, "ms", churn.PausesMs.Count > 0 ? churn.PausesMs : [0.0], With(p, "churn-gc-pause"), metrics: churnMetrics);
        GC.KeepAlive(subject);
    }

    /// <summary>
    /// Builds, churns and frees a small set first, so what the first use of a representation allocates once (its
    /// generated type, statics, the struct handles' shared heap, jitted code's data) stays out of the per-record figure.
    /// </summary>
    private static void WarmUp(string variant)
    {
        using var warm = LiveSetSubject.Create(variant);
        warm.Allocate(4096);
        warm.Fill();
        for (int i = 0; i < warm.Count; i++) warm.Replace(i, -i);
    }

    /// <summary>Weighs the managed heap before, after the container and after the records (full blocking collections).</summary>
    public static LiveSetBytes MeasureBytes(LiveSetSubject subject, int count)
    {
        long baseline = GC.GetTotalMemory(forceFullCollection: true);
        subject.Allocate(count);
        long container = GC.GetTotalMemory(forceFullCollection: true);
        subject.Fill();
        long records = GC.GetTotalMemory(forceFullCollection: true);
        return new LiveSetBytes(baseline, container, records, count);
    }

    /// <summary>Times full blocking compacting gen-2 collections: wall clock and the runtime's pause-duration delta (ms).</summary>
    public static (double[] WallMs, double[] PauseMs) MeasureFullCollections(int count)
    {
        var wall = new double[count];
        var paused = new double[count];
        for (int i = 0; i < count; i++)
        {
            var before = GC.GetTotalPauseDuration();
            long start = Stopwatch.GetTimestamp();
            GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
            wall[i] = Stopwatch.GetElapsedTime(start).TotalMilliseconds;
            paused[i] = (GC.GetTotalPauseDuration() - before).TotalMilliseconds;
        }
        return (wall, paused);
    }

    /// <summary>The churn phase's figures.</summary>
    internal sealed record ChurnResult(double[] RatesPerSecond, double Seconds, IReadOnlyList<double> PausesMs, IReadOnlyList<int> ByGeneration, long Unobserved, double TotalPauseMs, long Replacements);

    /// <summary>
    /// Replaces a tenth of the set per round at positions from a fixed-seed xorshift (with repeats), each replacement
    /// also allocating <see cref="GarbageBytes"/> of short-lived garbage so every variant sees collections.
    /// </summary>
    public static ChurnResult Churn(LiveSetSubject subject, int rounds, CancellationToken cancellation)
    {
        int perRound = Math.Max(1, subject.Count / 10);
        var rates = new double[rounds];
        uint state = 2463534242;
        int value = subject.Count;
        var log = GcPauseLog.StartingNow();
        var pauseBefore = GC.GetTotalPauseDuration();
        double seconds = 0;
        for (int r = 0; r < rounds; r++)
        {
            cancellation.ThrowIfCancellationRequested();
            int seen = GC.CollectionCount(0);
            long start = Stopwatch.GetTimestamp();
            for (int k = 0; k < perRound; k++)
            {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                subject.Replace((int)(state % (uint)subject.Count), value++);
                s_garbage = new byte[GarbageBytes];
                // Every 256 replacements (about 25 KB allocated, far below any gen0 budget): at most one GC between polls.
                if ((k & 255) == 0 && GC.CollectionCount(0) != seen)
                {
                    seen = GC.CollectionCount(0);
                    log.Poll();
                }
            }
            double elapsed = Stopwatch.GetElapsedTime(start).TotalSeconds;
            seconds += elapsed;
            rates[r] = perRound / elapsed;
        }
        log.Poll();
        double total = (GC.GetTotalPauseDuration() - pauseBefore).TotalMilliseconds;
        return new ChurnResult(rates, seconds, log.PausesMs.ToArray(), log.ByGeneration.ToArray(), log.Unobserved(GC.GetGCMemoryInfo(GCKind.Any).Index), total, (long)perRound * rounds);
    }

    private static Dictionary<string, string> With(IReadOnlyDictionary<string, string> p, string op) => new(p) { ["op"] = op };
}
