using System.Runtime;
using Manaloc.Lab.Subjects;

namespace Manaloc.Lab.Experiments;

/// <summary>The child's side of the live-set experiment: build one representation, weigh it, collect, churn.</summary>
internal static class LiveSetProbe
{
    /// <summary>Short-lived garbage per replacement (a 64-byte array), the same in every variant.</summary>
    internal const int GarbageBytes = 40;
    private static byte[]? s_garbage;

    public static int Records(RunSettings s) => s.Pick(smoke: 20_000, quick: 1_000_000, full: 10_000_000);
    public static int ChurnRounds(RunSettings s) => s.Pick(smoke: 2, quick: 10, full: 10);

    /// <summary>
    /// <paramref name="variant"/>'s churn rounds: <see cref="ChurnRounds(RunSettings)"/> where a target reads its churn
    /// (<see cref="HasJudgedChurn"/>); in a quick run the other paths, whose churn only the report's table shows, take
    /// <see cref="UnjudgedQuickRounds"/> (the per-object handles' 10 rounds took about 2 s each, a third of a launch), and
    /// only in the launch that measures figures no target reads (<see cref="RunSettings.MeasuresUnjudged"/>); the other
    /// launches' children of those paths take none (0: no churn phase), which saved about 0.3 s of CPU a child.
    /// </summary>
    public static int ChurnRounds(RunSettings s, string variant)
        => HasJudgedChurn(variant) || s.Mode != RunMode.Quick ? ChurnRounds(s) : s.MeasuresUnjudged ? UnjudgedQuickRounds : 0;

    /// <summary>Churn rounds of a quick run's paths whose churn no target reads: two, the fewest that still give the report's
    /// table a slowest and a fastest round.</summary>
    public const int UnjudgedQuickRounds = 2;

    /// <summary>
    /// The share of the set one churn round replaces, as a divisor: a tenth (<see cref="JudgedRoundDivisor"/>) where a
    /// target reads the churn or the run is not quick; in a quick run the paths whose churn only the report's table shows
    /// replace a twentieth per round (<see cref="UnjudgedQuickRoundDivisor"/>): the per-object handles' two rounds of a
    /// tenth took about a second per child, and a table's throughput needs no more than half of that.
    /// </summary>
    public static int RoundDivisor(RunSettings s, string variant)
        => HasJudgedChurn(variant) || s.Mode != RunMode.Quick ? JudgedRoundDivisor : UnjudgedQuickRoundDivisor;

    /// <summary>A tenth of the set per churn round.</summary>
    public const int JudgedRoundDivisor = 10;

    /// <summary>A twentieth of the set per churn round (a quick run's paths whose churn no target reads).</summary>
    public const int UnjudgedQuickRoundDivisor = 20;
    // Not divided between launches: each launch needs a spread of its own, or its interval is one point and launches
    // that disagree cannot be told from launches that vary.
    private static int FullCollections(RunSettings s) => s.Pick(smoke: 1, quick: 3, full: 5);

    /// <summary>Builds, measures and churns the plan's representation, recording four measurements (two without a churn phase).</summary>
    public static void Run(ExperimentContext context, LiveSetPlan plan)
    {
        string gc = GCSettings.IsServerGC ? LiveSet.Server : LiveSet.Workstation; // what the runtime runs, not what was asked
        var p = Parameters.Of(("gc", gc), ("records", plan.Records));
        context.Status($"{plan.Variant}: {plan.Records} records, {gc} GC");
        WarmUp(plan.Variant);
        using var subject = LiveSetSubject.Create(plan.Variant);
        var bytes = LiveSetBytes.Measure(subject, plan.Records);
        context.RecordSamples(plan.Variant, "B/record", [bytes.PerRecord], With(p, "heap"), metrics: new Dictionary<string, double>
        {
            ["containerBytesPerRecord"] = bytes.ContainerPerRecord,
            ["recordBytesPerRecord"] = bytes.RecordsPerRecord,
            ["baselineHeapBytes"] = bytes.Baseline, // the child's own live heap before the set: part of every full pause below
        });
        var (wall, paused) = MeasureFullCollections(FullCollections(context.Settings));
        context.RecordSamples(plan.Variant, "ms", wall, With(p, "full-gc"), metrics: new Dictionary<string, double>
        {
            ["totalPauseDurationMs"] = Statistics.From(paused).Median,
        });
        // A quick launch that leaves out the churn no target reads (ChurnRounds) ends here: its heap and full-collection
        // figures, which targets read, are measured in every launch alike.
        if (plan.ChurnRounds == 0)
        {
            GC.KeepAlive(subject);
            return;
        }
        context.Status($"{plan.Variant}: churn, {gc} GC");
        // Only the class objects' and the struct handles' churn p99 is judged (a target reads it): the other paths take
        // their rounds and no more, as their throughput is over the rounds either way.
        var extension = HasJudgedChurn(plan.Variant) ? ChurnExtension(context.Settings) : TimeSpan.Zero;
        var churn = Churn(subject, plan.ChurnRounds, context.Cancellation, extension, PausesWanted(context.Settings), RoundDivisor(context.Settings, plan.Variant));
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

    /// <summary>Times full blocking compacting gen-2 collections: wall clock and the runtime's pause-duration delta (ms).</summary>
    public static (double[] WallMs, double[] PauseMs) MeasureFullCollections(int count)
    {
        var wall = new double[count];
        var paused = new double[count];
        MeasureFullCollections(wall, paused);
        return (wall, paused);
    }

    /// <summary>As <see cref="MeasureFullCollections(int)"/> into the caller's spans (one collection per element), allocating nothing.</summary>
    public static void MeasureFullCollections(Span<double> wallMs, Span<double> pauseMs)
    {
        for (int i = 0; i < wallMs.Length; i++)
        {
            var before = GC.GetTotalPauseDuration();
            wallMs[i] = LabClock.Time(static () => GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true)).TotalMilliseconds;
            pauseMs[i] = (GC.GetTotalPauseDuration() - before).TotalMilliseconds;
        }
    }

    /// <summary>The churn phase's figures.</summary>
    internal sealed record ChurnResult(double[] RatesPerSecond, double Seconds, IReadOnlyList<double> PausesMs, IReadOnlyList<int> ByGeneration, long Unobserved, double TotalPauseMs, long Replacements);

    /// <summary>True for the variants whose churn a target reads (the p99 GC pause, the throughput): only they go on past their rounds for a p99.</summary>
    internal static bool HasJudgedChurn(string variant) => variant is LiveSetSubject.Class or LiveSetSubject.StructHandles;

    /// <summary>How long the churn may go on past its rounds to collect the pauses a p99 needs (none in smoke runs).</summary>
    public static TimeSpan ChurnExtension(RunSettings s) => TimeSpan.FromSeconds(s.Pick(smoke: 0, quick: 12, full: 30) / (double)s.Launches); // the launches' pauses pool for the p99

    /// <summary>The pauses one launch's churn goes on for: its share of the <see cref="Statistics.MinForP99"/> the launches' pooled pauses need.</summary>
    public static int PausesWanted(RunSettings s) => (Statistics.MinForP99 + s.Launches - 1) / s.Launches;

    /// <summary>
    /// Whether the churn takes another round: always within its <paramref name="rounds"/>; past them only while it has fewer
    /// than <paramref name="wanted"/> pauses, time is left in <paramref name="limitSeconds"/>, and the pace so far (pauses per
    /// second of churn) can still reach <paramref name="wanted"/> in the time left. A set that collects rarely (the class
    /// objects under server GC: a few collections in seconds) would spend the whole limit and still leave the p99 unmeasured.
    /// </summary>
    internal static bool TakesAnotherRound(int round, int rounds, int pauses, int wanted, double seconds, double extended, double limitSeconds)
    {
        if (round < rounds) return true;
        if (pauses >= wanted || extended >= limitSeconds) return false;
        double pace = seconds > 0 ? pauses / seconds : 0;
        return pauses + pace * (limitSeconds - extended) >= wanted;
    }

    /// <summary>
    /// Replaces a <paramref name="roundDivisor"/>th of the set per round (a tenth unless told) at positions from a fixed-seed xorshift (with repeats), each replacement
    /// also allocating <see cref="GarbageBytes"/> of short-lived garbage so every variant sees collections. After its
    /// <paramref name="rounds"/>, a variant that has seen fewer than <paramref name="pausesWanted"/> collections goes on with
    /// more rounds of the same work, until it has, <paramref name="extensionLimit"/> has passed, or its pace cannot get there
    /// in time (<see cref="TakesAnotherRound"/>): the GC grows its budget where many objects survive, so the class set sees
    /// few and long collections, and its p99 would otherwise go unmeasured. Throughput is over every round, so the extra
    /// rounds do not change what it means.
    /// </summary>
    public static ChurnResult Churn(LiveSetSubject subject, int rounds, CancellationToken cancellation, TimeSpan extensionLimit, int pausesWanted = Statistics.MinForP99,
        int roundDivisor = JudgedRoundDivisor)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(roundDivisor);
        int perRound = Math.Max(1, subject.Count / roundDivisor);
        var rates = new List<double>(rounds);
        uint state = 2463534242;
        int value = subject.Count;
        var log = GcPauseLog.StartingNow();
        var pauseBefore = GC.GetTotalPauseDuration();
        double seconds = 0;
        double extended = 0;
        for (int r = 0; TakesAnotherRound(r, rounds, log.PausesMs.Count, pausesWanted, seconds, extended, extensionLimit.TotalSeconds); r++)
        {
            cancellation.ThrowIfCancellationRequested();
            int seen = GC.CollectionCount(0);
            long start = LabClock.Now;
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
            double elapsed = LabClock.Since(start).TotalSeconds;
            seconds += elapsed;
            if (r >= rounds) extended += elapsed;
            rates.Add(perRound / elapsed);
        }
        log.Poll();
        double total = (GC.GetTotalPauseDuration() - pauseBefore).TotalMilliseconds;
        return new ChurnResult(rates.ToArray(), seconds, log.PausesMs.ToArray(), log.ByGeneration.ToArray(), log.Unobserved(GC.GetGCMemoryInfo(GCKind.Any).Index), total, (long)perRound * rates.Count);
    }

    private static Parameters With(Parameters p, string op) => p.With("op", op);
}
