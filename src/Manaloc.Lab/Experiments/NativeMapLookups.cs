namespace Manaloc.Lab.Experiments;

/// <summary>
/// The native-map experiment's lookups, in the launch's own process: every variant and the floor (the entries in a plain
/// native array, one cache miss a lookup) filled to the run's count side by side, the lookup streams built once, and each
/// thread count's cells sampled in rounds (<see cref="Rounds.SampleCells"/>), one short sample of every cell a
/// round, so outside load and the machine's state hit every variant alike and the ratios between variants are paired
/// within a process instead of across processes.
/// </summary>
/// <remarks>
/// Each cell is measured in its steady state. Every lookup loop is at its final tier before the first sample (the JIT
/// warm-up goes on until a round of calls of every loop compiles nothing), and each sample follows an untimed run of
/// its own cell as long as itself: a million-entry map's working set (tens of megabytes read at random) is larger than
/// the caches, and after another variant's sample a map reads several milliseconds of lookups before its bucket
/// headers (or bucket array) and its hot keys are back, longer for Zipf keys than uniform ones. With a shorter untimed
/// run each sample timed part of that warm-up, by an amount set by the variant that ran before it, and the intervals
/// were as wide as that. Nothing here allocates per operation: a cell's bytes per operation are the lookups' own.
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
    /// Interleaved rounds of the 1-thread cells (every variant's; each target reads two of them), over all the lookup
    /// launches (they pool): quick mode's one launch takes two Williams cycles of the twelve cells, full mode's five one each.
    /// Why two in quick mode: a target's interval is the bootstrap of a ratio of two cells' medians over the rounds drawn
    /// again, so its width is the samples' spread over the square root of the rounds; with one cycle (12 rounds) a quiet
    /// run's 1-thread intervals spanned 0.84-1.27 around a ratio of 1.03. The second cycle is paid for by shorter samples
    /// (<see cref="JudgedSampleTarget"/>): the time stays within the experiment's quick budget.
    /// </summary>
    private static int SingleThreadRounds(RunSettings s) => s.Pick(smoke: 2, quick: 24, full: 60);

    /// <summary>Interleaved rounds of the 2-thread cells a target reads: quick mode's one launch takes two Williams cycles of the eight cells, full mode's five one each.</summary>
    private static int TwoThreadRounds(RunSettings s) => s.Pick(smoke: 2, quick: 16, full: 40);

    /// <summary>Rounds of the cells only charted (the mix; the 2-thread lookups of the maps no target reads at 2 threads).</summary>
    private static int ChartedRounds(RunSettings s) => s.Pick(smoke: 2, quick: 8, full: 20);

    /// <summary>
    /// One judged sample's target, after an untimed run as long (<see cref="UntimedShare"/>). Quick mode's 4 ms hold
    /// some thirty thousand lookups of a hundred nanoseconds or more (each a cache and TLB miss), so one preemption or
    /// interrupt weighs little, and a 2-thread sample starts its pair of threads rarely. More rounds of shorter samples
    /// narrow a ratio's interval more than fewer long ones in the same time: the rounds' spread comes from the machine's
    /// state between rounds, which a longer sample does not average away.
    /// </summary>
    private static TimeSpan JudgedSampleTarget(RunSettings s) => TimeSpan.FromMilliseconds(s.Pick(smoke: 1, quick: 4, full: 20));

    /// <summary>One charted sample's target: short, so a burst of outside load spoils one round of one cell, not a cell's figure.</summary>
    private static TimeSpan ChartedSampleTarget(RunSettings s) => TimeSpan.FromMilliseconds(s.Pick(smoke: 1, quick: 2, full: 20));

    /// <summary>The untimed run before each sample, as a share of the sample: as long as the sample (see the remarks).</summary>
    private const double UntimedShare = 1.0;

    private static readonly string[] Streams = ["lookup-uniform", "lookup-zipf"];

    /// <summary>Fills every variant and the floor, then measures their lookups and the mix (where a map takes concurrent writes) at 1 and 2 threads.</summary>
    public static void Run(ExperimentContext context, long entries)
    {
        LookupStream? uniform = null, zipf = null;
        var subjects = new List<MapSubject>();
        try
        {
            foreach (string variant in MapSubjects.Reported) subjects.Add(MapSubjects.Create(variant, entries));
            // The streams are drawn on the thread that fills the native maps, after them: it finishes well before the
            // managed fills on this thread, and the draws (two million Zipf and uniform keys) need no core of their own.
            FillAll(context, subjects, entries, afterNativeFills: () =>
            {
                uniform = NativeMapWorkload.Uniform(entries, StreamLength(context.Settings), seed: 1);
                zipf = NativeMapWorkload.Zipf(entries, StreamLength(context.Settings), seed: 2);
            });
            // FillAll returns once the other thread's task has completed, which orders the streams' writes before these reads.
            Measure(context, subjects, entries, uniform!, zipf!);
        }
        finally
        {
            foreach (var subject in subjects) subject.Dispose();
        }
    }

    /// <summary>
    /// Fills every subject, untimed. The maps on the GC heap one after another on this thread, each with collections
    /// suspended (a fill keeps nearly everything it allocates, so the collections it would trigger only copy the growing
    /// map from generation to generation); the native maps and the floor meanwhile on a second thread (they allocate
    /// nothing managed, and nothing is timed), which then runs <paramref name="afterNativeFills"/> (untimed set-up: should
    /// it allocate past a managed fill's no-GC region, that region ends and the fill goes on with collections). Then one untimed full collection settles the heap, so no collection a fill
    /// deferred lands in a sample, and the managed maps are read in the state a long-lived map is in: compacted, in
    /// generation 2.
    /// </summary>
    private static void FillAll(ExperimentContext context, List<MapSubject> subjects, long entries, Action afterNativeFills)
    {
        var managed = subjects.Where(s => ManagedBytesPerEntry(s.Variant) > 0).ToArray();
        var native = subjects.Where(s => ManagedBytesPerEntry(s.Variant) == 0).ToArray();
        context.Status("lookups: filling the maps");
        var nativeFills = Task.Run(() =>
        {
            foreach (var subject in native)
            {
                context.Cancellation.ThrowIfCancellationRequested();
                subject.Fill(entries);
            }
            context.Cancellation.ThrowIfCancellationRequested();
            afterNativeFills();
        });
        try
        {
            foreach (var subject in managed)
            {
                context.Cancellation.ThrowIfCancellationRequested();
                NoGcRegion.Run(entries * ManagedBytesPerEntry(subject.Variant) + (16 << 20), () =>
                {
                    subject.Fill(entries);
                    return true;
                });
            }
        }
        finally
        {
            // The maps are disposed after this method, on any outcome: never while the other thread still fills one.
            ((IAsyncResult)nativeFills).AsyncWaitHandle.WaitOne();
        }
        nativeFills.GetAwaiter().GetResult();
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        GC.WaitForPendingFinalizers();
    }

    /// <summary>
    /// What a managed map's fill allocates per entry, with room to spare, for its no-GC region (0: a native one):
    /// Dictionary's arrays over its doublings (about 44 bytes an entry at the end, twice that in all), ConcurrentDictionary's
    /// 48-byte node and its bucket arrays, FasterKV's pinned log pages and index.
    /// </summary>
    private static long ManagedBytesPerEntry(string variant) => variant switch
    {
        MapSubjects.Dictionary => 128,
        MapSubjects.Concurrent => 112,
        MapSubjects.Faster => 96,
        _ => 0,
    };

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

        int tierUpRounds = TierUp.Run(context, [.. displayOrder.Select(c => (Action)(() => c.Body(0, 256)))], untilNothingCompiles: true);
        if (!context.IsSmoke) context.Note($"Lookups' JIT warm-up: {tierUpRounds} rounds of calls of every loop, until a round compiled nothing (at most {TierUp.MaxRounds}).");
        var perRound = context.Settings with { WarmUp = TimeSpan.FromMilliseconds(context.IsSmoke ? 0 : 10), SampleTarget = JudgedSampleTarget(context.Settings), Samples = 1 };
        var pilot = TimeSpan.FromMilliseconds(context.IsSmoke ? 0 : 10); // how long the harness sizes each cell's count
        // The cells a target reads take most rounds, in two sets of their own (each balanced over its cells); the charted
        // cells fewer, so their time goes to the judged ratios' intervals.
        var measured = new Dictionary<Rounds.Cell, Measurement>(ReferenceEqualityComparer.Instance);
        void Sample(List<Rounds.Cell> cells, RunSettings settings, int rounds)
        {
            var results = Rounds.SampleCells(context, cells, settings, PerLaunch(context.Settings, rounds), pilot, UntimedShare);
            for (int i = 0; i < cells.Count; i++) measured[cells[i]] = results[i];
        }
        Sample(single, perRound, SingleThreadRounds(context.Settings));
        Sample(dual, perRound with { WarmUp = TimeSpan.Zero }, TwoThreadRounds(context.Settings));
        Sample(charted, perRound with { WarmUp = TimeSpan.Zero, SampleTarget = ChartedSampleTarget(context.Settings) }, ChartedRounds(context.Settings));
        foreach (var cell in displayOrder) context.Record(measured[cell]);
        GC.KeepAlive(sinks);
    }

    /// <summary>One lookup launch's share of <paramref name="total"/> rounds (at least one).</summary>
    private static int PerLaunch(RunSettings s, int total) => Math.Max(1, (total + Launches(s) - 1) / Launches(s));
}
