namespace Manaloc.Lab.Experiments;

/// <summary>
/// Manaloc's own claim: a large keyed live set whose entries live in native memory costs the collector nothing and
/// grows without a stall. <c>long</c> keys to a 24-byte struct value in <c>Dictionary</c>, <c>ConcurrentDictionary</c>,
/// FASTER's <c>FasterKV</c> kept in memory, <c>NativeMap</c> and <c>ConcurrentNativeMap</c>, each grown to the run's
/// count (10M; 1M quick) in its own child process: the full blocking GC pause with the map alive, managed and native
/// bytes per entry, the peak resident set while growing, the longest insert that recurs in a second growth of the same map and allocation per insert. Then, in
/// the launch's process, every map and the floor (the entries in a plain native array) side by side: lookups of hits
/// (uniform and Zipf 0.99 keys) and a 95% read / 5% update mix at 1 and 2 threads, in interleaved rounds.
/// </summary>
public sealed class NativeMap() : Experiment(
    "native-map", "Manaloc's own claim: a keyed live set off the GC heap, Dictionary-shaped",
    "long keys to a 24-byte struct, grown to 10M entries (1M quick) in a child per variant: full GC pause with the map alive, bytes per entry, peak memory and longest insert while growing, lookups (uniform and Zipf 0.99) at 1 and 2 threads, a 95/5 read/update mix, allocation per operation.",
    MapSubjects.Reported, MapSubjects.Concurrent, quickSeconds: 20, sweepParameter: "entries", quickLaunches: 2)
{
    private const string Dictionary = MapSubjects.Dictionary;
    private const string Concurrent = MapSubjects.Concurrent;
    private const string Faster = MapSubjects.Faster;
    private const string Native = MapSubjects.Native;
    private const string ConcurrentNative = MapSubjects.ConcurrentNative;
    private const string Floor = MapSubjects.Floor;

    /// <summary>The measurements of <paramref name="op"/> at the largest entry count the run measured it at (the run's size: targets are judged there).</summary>
    private static Func<Measurement, bool> AtFull(Figures f, string op, int threads = 1)
    {
        long full = f.All.Where(m => m.Parameters.Is("op", op)).Select(m => m.Parameters.Long("entries")).DefaultIfEmpty(-1).Max();
        return m => m.Parameters.Is("op", op) && m.Parameters.Is("entries", full) && m.Threads == threads;
    }

    private static double? Ratio(Figures f, string candidate, string baseline, string op)
        => f.Median(candidate, AtFull(f, op)) / f.Median(baseline, AtFull(f, op));

    /// <summary>A variant's bytes per entry, managed and native together: what a table of the same entries costs in all.</summary>
    private static double? TotalBytesPerEntry(Figures f, string variant)
        => f.Median(variant, AtFull(f, "managed-bytes")) + f.Median(variant, AtFull(f, "native-bytes"));

    /// <inheritdoc/>
    public override Claim Claim => new("A keyed live set whose entries live in native memory costs the collector nothing: ConcurrentNativeMap's full blocking GC pause against ConcurrentDictionary's, same entries", null,
        new Metric("full GC pause with the map alive, ConcurrentDictionary ÷ ConcurrentNativeMap (times shorter)", Unit.Ratio, f => Ratio(f, Concurrent, ConcurrentNative, "full-gc")));

    /// <inheritdoc/>
    public override IReadOnlyList<Target> Targets =>
    [
        .. new[] { Native, ConcurrentNative }.SelectMany(MemoryTargets),
        Target.AtLeast("lookups, uniform hits, 1 thread: NativeMap vs Dictionary<long, T>", Unit.Ratio, f => Lookups(f, Native, Dictionary, "lookup-uniform", 1), 1.0)
            .AgainstFloor(AgainstFloor(Native, "lookup-uniform", 1)),
        Target.AtLeast("lookups, Zipf 0.99 hits, 1 thread: NativeMap vs Dictionary<long, T>", Unit.Ratio, f => Lookups(f, Native, Dictionary, "lookup-zipf", 1), 1.0)
            .AgainstFloor(AgainstFloor(Native, "lookup-zipf", 1)),
        .. new[] { 1, 2 }.SelectMany(threads => new[] { "lookup-uniform", "lookup-zipf" }.SelectMany(op => new[]
        {
            Target.AtLeast($"lookups, {Describe(op)}, {Format.Count(threads, "thread")}: ConcurrentNativeMap vs ConcurrentDictionary<long, T>", Unit.Ratio,
                f => Lookups(f, ConcurrentNative, Concurrent, op, threads), 1.0).AgainstFloor(AgainstFloor(ConcurrentNative, op, threads)),
            Target.AtLeast($"lookups, {Describe(op)}, {Format.Count(threads, "thread")}: ConcurrentNativeMap vs FasterKV reads of the same keys", Unit.Ratio,
                f => Lookups(f, ConcurrentNative, Faster, op, threads), 1.0).AgainstFloor(AgainstFloor(ConcurrentNative, op, threads)),
        })),
        Target.AtMost("NativeMap: bytes allocated per operation after warm-up (worst of inserts, 1-thread lookups)", Unit.BytesPerOp, f => WorstAllocation(f, Native), 0.01),
        Target.AtMost("ConcurrentNativeMap: bytes allocated per operation after warm-up (worst of inserts, 1-thread lookups, the 1-thread mix)", Unit.BytesPerOp, f => WorstAllocation(f, ConcurrentNative), 0.01),
    ];

    private static IEnumerable<Target> MemoryTargets(string map) =>
    [
        Target.AtMost($"{map}: full GC pause with the map alive vs ConcurrentDictionary<long, T>'s (Dictionary's, the floor, beside in the table)", Unit.Ratio,
            f => Ratio(f, map, Concurrent, "full-gc"), 0.02),
        Target.AtMost($"{map}: managed bytes per entry", "B/entry", f => f.Median(map, AtFull(f, "managed-bytes")), 0.01),
        Target.AtMost($"{map}: native bytes per entry vs Dictionary<long, T>'s bytes per entry (managed + native)", Unit.Ratio,
            f => f.Median(map, AtFull(f, "native-bytes")) / TotalBytesPerEntry(f, Dictionary), 1.1),
        Target.AtMost($"{map}: peak memory while growing vs Dictionary<long, T>'s", Unit.Ratio, f => Ratio(f, map, Dictionary, "peak-memory"), 0.8),
        Target.AtMost($"{map}: longest insert that recurs in a second growth (per {GrowthTrace.BlockInserts}-insert block, the lesser of two growths; a block that lost time to preemption or the host counted by its own CPU time) vs Dictionary<long, T>'s (0.01x: 100 times shorter)", Unit.Ratio, f => Ratio(f, map, Dictionary, "longest-insert"), 0.01)
            .AgainstFloor(new Metric($"{map}'s longest insert vs the growth's floor (the same timed loop with the map taken out, run beside both growths and judged by the same rule; times as long)", Unit.Ratio,
                f => f.Median(map, AtFull(f, "longest-insert")) / f.Median(map, AtFull(f, "longest-insert-floor"))), InsertFloorTolerance),
    ];

    /// <summary>
    /// How far above the growth's floor a map's longest insert still counts as at it: an insert's timed span holds the
    /// map's own work (a few hundred nanoseconds) beside the key's mix the floor times, and the maxima are of the same
    /// machine noise, so a map with no slow step of its own sits near 1x the floor.
    /// </summary>
    private const double InsertFloorTolerance = 0.05;

    /// <summary>
    /// Launches in which a variant is grown in a child of its own. Full mode: every launch. Quick mode (two launches): both
    /// Manaloc maps, whose figures the targets judge, in both, enough for an interval (a figure observed once has none, and
    /// its target reads inconclusive); the BCL's two (the targets' anchors: a resize's length, a collection's pause, both
    /// far from the maps') in the first; FasterKV's growth (charted, read by no target) not at all: its lookups, which
    /// targets read, run with the others'. The lookups run in <see cref="NativeMapLookups.Launches"/>, the second: a third
    /// process would only start the runtime again.
    /// </summary>
    private static int GrowthLaunches(RunSettings s, string variant)
        => Math.Min(s.Launches, s.Pick(smoke: s.Launches, quick: variant is Faster ? 0 : variant is Native or ConcurrentNative ? 2 : 1, full: s.Launches));

    private static string Describe(string op) => op == "lookup-zipf" ? "Zipf 0.99 hits" : "uniform hits";

    private static double? Lookups(Figures f, string candidate, string baseline, string op, int threads)
        => f.TimesBetter(candidate, baseline, AtFull(f, op, threads));

    /// <summary>A map's lookups against the floor's on the same keys, measured in the same rounds (times as fast; below 1 is the map's hashing and probing).</summary>
    private static Metric AgainstFloor(string map, string op, int threads)
        => new($"{map} vs the native array of the entries (the floor), {Describe(op)}, {Format.Count(threads, "thread")}", Unit.Ratio, f => Lookups(f, map, Floor, op, threads));

    /// <summary>
    /// The most a variant allocated per operation: over its whole growth (inserts), in its 1-thread lookups and in its
    /// 1-thread mix, each the thread's own precise count (<see cref="GC.GetAllocatedBytesForCurrentThread"/>). The
    /// 2-thread figures run the same paths but are counted process-wide (<see cref="GC.GetTotalAllocatedBytes(bool)"/>),
    /// so the lab's own work on other threads (a sweep thread's start-up) would count there: they are shown, not judged.
    /// </summary>
    private static double? WorstAllocation(Figures f, string variant)
    {
        var inserts = f.Median(variant, AtFull(f, "insert-allocation"));
        var others = f.All.Where(m => m.Variant == variant && m.AllocatedBytesPerOp is not null && m.Threads == 1)
            .Select(m => m.AllocatedBytesPerOp).ToArray();
        if (inserts is null || others.Length == 0) return null;
        return others.Append(inserts).Max();
    }

    /// <inheritdoc/>
    /// <remarks>The concurrent map is the path to recommend in a service; Dictionary's pause (the floor: entries the GC does not trace) and the lookup speeds stand beside it.</remarks>
    public override Headline Headline => new(
        new Metric("ConcurrentNativeMap: full GC pause with the map alive, share of ConcurrentDictionary's (lower is better)", Unit.Ratio, f => Ratio(f, ConcurrentNative, Concurrent, "full-gc")),
        new Metric("Dictionary<long, T> (entries not traced, the floor): the same share", Unit.Ratio, f => Ratio(f, Dictionary, Concurrent, "full-gc")),
        new Metric("ConcurrentNativeMap vs ConcurrentDictionary, Zipf 0.99 lookups, 2 threads (times as fast)", Unit.Ratio, f => Lookups(f, ConcurrentNative, Concurrent, "lookup-zipf", 2)),
        new Metric("NativeMap vs Dictionary, uniform lookups, 1 thread (times as fast)", Unit.Ratio, f => Lookups(f, Native, Dictionary, "lookup-uniform", 1)));

    /// <inheritdoc/>
    public override IReadOnlyList<ParameterSpec> DescribeParameters(RunSettings settings)
    {
        var plan = new NativeMapPlan(Dictionary, NativeMapProbe.Entries(settings));
        static string[] Texts(IEnumerable<long> values) => [.. values.Distinct().Select(v => v.ToString(CultureInfo.InvariantCulture))];
        return
        [
            new("entries", "entries in the map when measured: the growth stops at each to weigh it and time a full collection (targets are judged at the largest); lookups and the mix at the largest", Texts(plan.Checkpoints)),
            new("op", "full-gc: one blocking compacting gen-2 collection with the map alive (wall clock); managed-bytes, native-bytes: per entry after a full collection "
                + "(native: the resident set's growth beyond the GC's committed bytes); peak-memory: the peak resident set since the growth began, above the start; "
                + $"longest-insert: the slowest insert so far that recurs in a second growth, timed in {GrowthTrace.BlockInserts}-insert blocks: the child of a map a target reads (NativeMap, ConcurrentNativeMap, and Dictionary, their reference) grows a second, fresh map of the variant to the same checkpoints once every other growth figure is taken (the first map freed), its blocks covering the same key indexes, and the figure is the largest over the blocks so far of the lesser of the two growths' judged slowest insert in that block (a step of the map's own recurs in the same block both times; a stall of the host must hit the same block twice); the second growth times only the blocks whose first-growth worst is above that figure over the blocks before them (no other block can raise it), inserts the others' keys untimed and stops once no block left can matter, which gives the same figure (ConcurrentDictionary and FasterKV, read by no target: one growth, its slowest insert); within a growth, a block whose wall time exceeds the thread's CPU time by more than {ThreadDisturbance.MarginNanoseconds / 1_000} µs or during which the thread was preempted (time lost to the scheduler, the host's stolen time or a blocked page fault) counts only by its slowest insert less all the time the block lost, a lower bound on that insert's own CPU time (its metrics: the first growth's judged slowest insert alone (longestInsertOneGrowthMs), the second's, the block of the recurring one and its first key index; of the first growth: the slowest of all inserts' wall time, blocks timed and disturbed, whether the figure came from a disturbed block, which insert, whether a collection ran during it, and the collections, their pause and the thread's involuntary context switches while growing); "
                + "longest-insert-floor (NativeMap, ConcurrentNativeMap): the same timed loop with the map taken out, after each block of inserts a block of trivial timed operations (a key's mix) for as long as the inserts took (after a disturbed block, as long as the undisturbed ones on average), its slowest operation taken by the same rules (beside both growths, the lesser of the two per block, beside the second growth only where its first block is above the floor's figure so far; longestOneGrowthMs: the first growth's alone): what the machine alone puts into one timed operation over the growth's time; insert-allocation: managed bytes allocated per insert so far; "
                + "lookup-uniform, lookup-zipf: lookups of inserted keys, every map and the floor (a native array of the entries read by insertion index) in interleaved rounds in one process (2 threads where the map allows concurrent readers); mix: 95% lookups, 5% updates, Zipf keys, 1 and 2 threads (the maps that take concurrent writes)",
                ["full-gc", "managed-bytes", "native-bytes", "peak-memory", "longest-insert", "longest-insert-floor", "insert-allocation", "lookup-uniform", "lookup-zipf", "mix"]),
            new("threads", "threads looking up or running the mix (1, 2)", ["1", "2"]),
        ];
    }

    /// <inheritdoc/>
    public override void Run(ExperimentContext context)
    {
        long entries = NativeMapProbe.Entries(context.Settings);
        var timeout = TimeSpan.FromMinutes(context.Settings.Pick(smoke: 2, quick: 2, full: 15));
        foreach (string variant in MapSubjects.All)
        {
            if (context.Settings.Launch >= GrowthLaunches(context.Settings, variant)) continue;
            var child = context.RunChild("run", new NativeMapPlan(variant, entries).ToArguments(), environment: null, timeout);
            foreach (var m in child.Measurements) context.Record(m);
            foreach (string note in child.Notes) context.Note($"{variant}: {note}");
        }
        if (NativeMapLookups.RunsIn(context.Settings)) NativeMapLookups.Run(context, entries);
        AddPauseTable(context);
        context.Note($"Keys: {entries:N0} distinct 64-bit values (a bijective mix of the insertion index, spread like random ids), inserted in order into an empty map of default capacity (FasterKV: sized for the count, as its index must be); "
            + "values: a 24-byte struct of three longs. Every lookup is a hit, and a miss fails the run.");
        context.Note($"Zipf keys: θ = {NativeMapWorkload.ZipfTheta} over the keys present, ranks shuffled onto the keys by a fixed-seed permutation, so the hot keys are spread over the table and the insertion order.");
        context.Note("Each variant grows in its own child process (workstation GC), one after another: its growth, weights and collections see no other map. "
            + "Quick mode runs two launches: it grows NativeMap and ConcurrentNativeMap in both and Dictionary and ConcurrentDictionary in the first (FasterKV's growth, charted and read by no target, only in full mode), and measures the lookups, FasterKV's too, in the second, in one process (their interval is that process's; full mode measures everything in every launch). "
            + "The longest insert of NativeMap, ConcurrentNativeMap and Dictionary is the longest that recurs in a second growth of the same map in the same child (per block the lesser of the two); that growth times only the blocks that can change the figure and stops once none is left; ConcurrentDictionary's, charted and read by no target, is its one growth's. "
            + "NativeMap's and ConcurrentNativeMap's longest insert is set beside the growth's floor, timed in the same child block by block with the inserts, in both growths: where the map's longest insert is within 5% of the floor's longest operation, the machine (the host taking the CPU away, interrupts) sets the figure, not the map, and the target reads at the floor. "
            + "The lookups and the mix run in the launch's process with every map and the floor filled side by side, in interleaved rounds of short samples (one of every cell a round, each after an untimed run of its own cell as long as the sample, once the JIT warm-up compiled nothing more; the cells a target reads in more and longer samples than the mix and the 2-thread lookups of Dictionary and NativeMap), "
            + "so the ratios between variants are paired in one process; the floor reads the same keys from a plain native array of the entries by insertion index (one cache miss a lookup).");
        context.Note("Dictionary<long, T> and NativeMap are read by 2 threads (both allow concurrent readers while nothing writes) but take no part in the mix.");
    }

    /// <summary>The full-GC pause of each variant beside ConcurrentDictionary's, with Dictionary's as the floor (entries the GC does not trace at all).</summary>
    private static void AddPauseTable(ExperimentContext context)
    {
        var f = new Figures(context.Measurements, random: null);
        if (f.Find(Concurrent, AtFull(f, "full-gc")) is null) return;
        var rows = MapSubjects.All.Where(v => f.Find(v, AtFull(f, "full-gc")) is not null).Select(v => (string[])
        [
            v == Dictionary ? $"{v} (floor)" : v,
            Format.Value(f.Median(v, AtFull(f, "full-gc")) ?? double.NaN, "ms"),
            Ratio(f, v, Concurrent, "full-gc") is { } r ? Format.Ratio(r) : "n/a",
            Format.Value(TotalBytesPerEntry(f, v) ?? double.NaN, "B"),
        ]).ToArray();
        context.AddTable(new ResultTable("Full blocking GC pause with the map alive, at the run's size (medians)", ["variant", "pause", "vs ConcurrentDictionary", "bytes/entry (managed + native)"], rows));
    }

    /// <inheritdoc/>
    public override void RunChild(string key, IReadOnlyList<string> arguments, ExperimentContext context)
    {
        if (key != "run") base.RunChild(key, arguments, context);
        NativeMapProbe.Run(context, NativeMapPlan.Parse(arguments));
    }
}
