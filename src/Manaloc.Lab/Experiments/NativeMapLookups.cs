namespace Manaloc.Lab.Experiments;

/// <summary>
/// The native-map experiment's lookups, in the launch's own process: every variant and the floor (the entries in a plain
/// native array, one cache miss a lookup) filled to the run's count side by side, the lookup streams built once, and each
/// thread count's cells sampled in rounds (<see cref="Rounds.SampleCells"/>), one short sample of every cell a
/// round, so outside load and the machine's state hit every variant alike and the ratios between variants are paired
/// within a process instead of across processes.
/// </summary>
/// <remarks>
/// Each sample follows an untimed quarter-sample of its own cell, so it starts from its own working set (its bucket
/// headers, its hot keys) rather than from the cache the previous variant left. Nothing here allocates per operation: a
/// cell's bytes per operation are the lookups' own.
/// </remarks>
internal static class NativeMapLookups
{
    /// <summary>Keys in each lookup stream, a power of two: read round and round by the lookup loops.</summary>
    private static int StreamLength(RunSettings s) => s.Pick(smoke: 1 << 12, quick: 1 << 20, full: 1 << 21);

    /// <summary>
    /// The launches that measure the lookups: every launch, except in quick mode one, with all the quick rounds (each
    /// launch fills six million-entry maps again, most of a launch's lookup time; as native-cache's quick mode, the
    /// interval is then that one process's, and full mode's five launches show how processes differ). The last ones, so
    /// that the first launches' time goes to the growth children.
    /// </summary>
    public static int Launches(RunSettings s) => Math.Min(s.Launches, s.Pick(smoke: s.Launches, quick: 1, full: s.Launches));

    /// <summary>Whether this launch measures the lookups (see <see cref="Launches"/>).</summary>
    public static bool RunsIn(RunSettings s) => s.Launch >= s.Launches - Launches(s);

    /// <summary>
    /// Interleaved rounds of the cells a target reads, over all the lookup launches (they pool): quick mode's one launch
    /// takes a whole number of Williams cycles of the 1-thread cells (12) and of the 2-thread ones (8).
    /// </summary>
    private static int JudgedRounds(RunSettings s) => s.Pick(smoke: 2, quick: 24, full: 60);

    /// <summary>Rounds of the cells only charted (the mix; the 2-thread lookups of the maps no target reads at 2 threads).</summary>
    private static int ChartedRounds(RunSettings s) => s.Pick(smoke: 2, quick: 8, full: 20);

    /// <summary>
    /// One judged sample's target. Quick mode's is 4 ms, twice the charted cells', in half the rounds (the same time): a
    /// lookup into a million-entry map is a cache and TLB miss of a hundred nanoseconds or more, so 2 ms held ten
    /// thousand or fewer, and one preemption or interrupt weighed on a sample twice as much as on one twice as long;
    /// each 2-thread sample also starts its pair of threads half as often.
    /// </summary>
    private static TimeSpan JudgedSampleTarget(RunSettings s) => TimeSpan.FromMilliseconds(s.Pick(smoke: 1, quick: 4, full: 20));

    /// <summary>One charted sample's target: short, so a burst of outside load spoils one round of one cell, not a cell's figure.</summary>
    private static TimeSpan ChartedSampleTarget(RunSettings s) => TimeSpan.FromMilliseconds(s.Pick(smoke: 1, quick: 2, full: 20));

    private static readonly string[] Streams = ["lookup-uniform", "lookup-zipf"];

    /// <summary>Fills every variant and the floor, then measures their lookups and the mix (where a map takes concurrent writes) at 1 and 2 threads.</summary>
    public static void Run(ExperimentContext context, long entries)
    {
        context.Status("lookups: streams");
        var uniform = NativeMapWorkload.Uniform(entries, StreamLength(context.Settings), seed: 1);
        var zipf = NativeMapWorkload.Zipf(entries, StreamLength(context.Settings), seed: 2);
        var subjects = new List<MapSubject>();
        try
        {
            foreach (string variant in MapSubjects.Reported)
            {
                context.Cancellation.ThrowIfCancellationRequested();
                context.Status($"lookups: filling {variant}");
                var subject = MapSubjects.Create(variant, entries);
                subjects.Add(subject);
                subject.Fill(entries);
            }
            Measure(context, subjects, entries, uniform, zipf);
        }
        finally
        {
            foreach (var subject in subjects) subject.Dispose();
        }
    }

    /// <summary>Whether a target reads the lookups of <paramref name="variant"/> at <paramref name="threads"/> threads
    /// (at 1 thread every variant; at 2 the concurrent maps against ConcurrentDictionary, FasterKV and the floor).</summary>
    private static bool Judged(string variant, int threads)
        => threads == 1 || variant is MapSubjects.Concurrent or MapSubjects.Faster or MapSubjects.ConcurrentNative or MapSubjects.Floor;

    private static void Measure(ExperimentContext context, List<MapSubject> subjects, long entries, LookupStream uniform, LookupStream zipf)
    {
        var p = Parameters.Of(("entries", entries));
        var sinks = new long[MapSubject.MaxThreads * 8];
        var single = new List<Rounds.Cell>();
        var dual = new List<Rounds.Cell>();
        var charted = new List<Rounds.Cell>();
        var displayOrder = new List<Rounds.Cell>(); // every cell, in the order the tables and charts list the variants
        foreach (var subject in subjects)
        {
            foreach (string op in Streams)
            {
                var stream = op == "lookup-zipf" ? zipf : uniform;
                Action<int, long> body = (t, n) => sinks[t * 8] += subject.Lookups(t, stream, n);
                displayOrder.Add(new(subject.Variant, p.With("op", op).With("threads", 1), 1, body));
                single.Add(displayOrder[^1]);
                if (!subject.ConcurrentReads) continue;
                displayOrder.Add(new(subject.Variant, p.With("op", op), 2, body));
                (Judged(subject.Variant, 2) ? dual : charted).Add(displayOrder[^1]);
            }
            if (subject.ConcurrentWrites)
            {
                // The mix at 1 thread too: its bytes per operation are the thread's own, precise count (a 2-thread
                // figure is process-wide, and a sweep thread's own start-up can land in its window).
                Action<int, long> mix = (t, n) => sinks[t * 8] += subject.Mix(t, zipf, n);
                displayOrder.Add(new(subject.Variant, p.With("op", "mix").With("threads", 1), 1, mix));
                displayOrder.Add(new(subject.Variant, p.With("op", "mix"), 2, mix));
                charted.AddRange(displayOrder.GetRange(displayOrder.Count - 2, 2));
            }
        }

        TierUp.Run(context, [.. displayOrder.Select(c => (Action)(() => c.Body(0, 256)))]);
        var perRound = context.Settings with { WarmUp = TimeSpan.FromMilliseconds(context.IsSmoke ? 0 : 10), SampleTarget = JudgedSampleTarget(context.Settings), Samples = 1 };
        var pilot = TimeSpan.FromMilliseconds(context.IsSmoke ? 0 : 10); // how long the harness sizes each cell's count
        // The cells a target reads take most rounds, in two sets of their own (each balanced over its cells); the charted
        // cells fewer, so their time goes to the judged ratios' intervals.
        int judged = PerLaunch(context.Settings, JudgedRounds(context.Settings));
        int chartedRounds = PerLaunch(context.Settings, ChartedRounds(context.Settings));
        var measured = new Dictionary<Rounds.Cell, Measurement>(ReferenceEqualityComparer.Instance);
        void Sample(List<Rounds.Cell> cells, RunSettings settings, int rounds)
        {
            var results = Rounds.SampleCells(context, cells, settings, rounds, pilot);
            for (int i = 0; i < cells.Count; i++) measured[cells[i]] = results[i];
        }
        Sample(single, perRound, judged);
        Sample(dual, perRound with { WarmUp = TimeSpan.Zero }, judged);
        Sample(charted, perRound with { WarmUp = TimeSpan.Zero, SampleTarget = ChartedSampleTarget(context.Settings) }, chartedRounds);
        foreach (var cell in displayOrder) context.Record(measured[cell]);
        GC.KeepAlive(sinks);
    }

    /// <summary>One lookup launch's share of <paramref name="total"/> rounds (at least one).</summary>
    private static int PerLaunch(RunSettings s, int total) => Math.Max(1, (total + Launches(s) - 1) / Launches(s));
}
