namespace Manaloc.Lab.Experiments;

/// <summary>
/// Manaloc's own claim for caches: a cache whose keys and values live in native memory under a byte budget costs the
/// collector nothing, stays within its budget and keeps up with the managed caches. String keys of 16 to 48 characters,
/// values of 64 to 512 bytes, in <c>MemoryCache</c> (SizeLimit in bytes), BitFaster's <c>ConcurrentLru</c> and
/// <c>ConcurrentLfu</c>, FASTER's <c>FasterKV</c> over SpanByte kept in memory, <c>ConcurrentDictionary&lt;string,
/// byte[]&gt;</c> and <c>NativeCache</c>, each in its own child process: the process's memory growth against a byte
/// budget, the full blocking GC pause and managed bytes per entry with 1M entries (10M full), reads, writes and a 95/5
/// Zipf 0.99 mix at 1 and 2 threads over keys as requests bring them, every hit copied into a reused writer (floors measured
/// beside them: the key's encoding and hash with the hit's value copied from its own place in a flat store, the same with
/// one load from an index of NativeCache's size before the copy, and the key alone), allocation per operation; and hit
/// ratios on three generated traces against ConcurrentLfu.
/// </summary>
public sealed class NativeCache() : Experiment(
    "native-cache", "Manaloc's own claim: an in-process cache off the GC heap under an exact byte budget",
    "string keys (16-48 chars) to 64-512 B values, 1M entries (10M full) in a child per cache: memory growth against a byte budget, full GC pause with the cache full, managed bytes per entry, a 95/5 Zipf 0.99 mix at 1 and 2 threads over keys as requests bring them, copying hits into a reused writer (floors: the key and the value copied from its own slot of a flat store, the same found through one load from an index of NativeCache's size, the key alone), allocation per get and set; hit ratios at a quarter of the working set on three traces against ConcurrentLfu.",
    CacheSubjects.All, CacheSubjects.Memory, quickSeconds: 20, sweepParameter: "entries")
{
    // The variants by their short names (CacheSubjects names them once).
    private const string Memory = CacheSubjects.Memory, Lru = CacheSubjects.Lru, Lfu = CacheSubjects.Lfu, Faster = CacheSubjects.Faster, Native = CacheSubjects.Native, Floor = CacheSubjects.Floor, IndexFloor = CacheSubjects.IndexFloor, KeyFloor = CacheSubjects.KeyFloor;

    /// <summary>The measurements of <paramref name="op"/> at <paramref name="threads"/> where the cache held the most entries the run gave it (the targets' point).</summary>
    private static Func<Measurement, bool> AtFull(Figures f, string op, int threads = 1)
    {
        bool Of(Measurement m) => m.Parameters.Is("op", op) && m.Threads == threads && m.Parameters.TryGetValue("entries", out _);
        var largest = f.All.Where(Of).MaxBy(m => m.Parameters.Long("entries"));
        return m => largest is not null && Of(m) && m.Parameters.Is("entries", largest.Parameters.Long("entries"));
    }

    private static double? Ratio(Figures f, string candidate, string baseline, string op)
        => f.Median(candidate, AtFull(f, op)) / f.Median(baseline, AtFull(f, op));

    private static Func<Measurement, bool> HitRatio(string trace) => m => m.Parameters.Is("op", "hit-ratio") && m.Parameters.Is("trace", trace);

    private static Func<Measurement, bool> HitRatio(string trace, string capacity) => m => HitRatio(trace)(m) && m.Parameters.Is("capacity", capacity);

    /// <summary>NativeCache's hit ratio on <paramref name="trace"/> against ConcurrentLfu's at <paramref name="capacity"/>: the median of
    /// the replicas' paired ratios (same trace, same keys), so the interval is the replicas' spread.</summary>
    private static double? HitRatioAgainstLfu(Figures f, string trace, string capacity)
        => f.Median(Native, m => m.Parameters.Is("op", NativeCacheTraces.PairedOp) && m.Parameters.Is("trace", trace) && m.Parameters.Is("capacity", capacity));

    private static Metric Mix(string candidate, string baseline, int threads)
        => new($"95/5 Zipf 0.99 mix, {Format.Count(threads, "thread")}: {candidate} vs {baseline} (times as fast)", Unit.Ratio, f => f.TimesBetter(candidate, baseline, AtFull(f, "mix", threads)));

    /// <inheritdoc/>
    public override Claim Claim => new("A cache whose keys and values live in native memory costs the collector nothing: NativeCache's full blocking GC pause against MemoryCache's, same entries", null,
        new Metric("full GC pause with the cache full, MemoryCache ÷ NativeCache (times shorter)", Unit.Ratio, f => Ratio(f, Memory, Native, "full-gc")));

    /// <inheritdoc/>
    public override IReadOnlyList<Target> Targets =>
    [
        Target.AtMost("NativeCache: full GC pause with the cache full vs MemoryCache's", Unit.Ratio, f => Ratio(f, Native, Memory, "full-gc"), 0.02),
        Target.AtMost("NativeCache: full GC pause with the cache full vs ConcurrentLru's", Unit.Ratio, f => Ratio(f, Native, Lru, "full-gc"), 0.02),
        .. new[] { 1, 2 }.SelectMany(threads => new[]
        {
            Target.AtLeast(Mix(Native, Memory, threads), 3).AgainstFloor(Mix(Native, Floor, threads)),
            Target.AtLeast(Mix(Native, Lru, threads), 1).AgainstFloor(Mix(Native, Floor, threads)),
            Target.AtLeast(Mix(Native, Faster, threads), 1).AgainstFloor(Mix(Native, Floor, threads)),
        }),
        .. NativeCacheTraces.All.Select(trace => Target.AtLeast($"hit ratio, {trace} trace, a quarter of the working set: NativeCache vs ConcurrentLfu holding as many entries", Unit.Ratio,
            f => HitRatioAgainstLfu(f, trace, NativeCacheTraces.Matched), 1.0)),
        Target.AtMost("NativeCache: process memory growth vs MaxBytes, filled with twice the budget", Unit.Ratio, f => f.Median(Native, AtFull(f, "memory-growth")), 1.1),
        Target.AtMost("NativeCache: managed bytes per entry, cache full", "B/entry", f => f.Median(Native, AtFull(f, "managed-bytes")), 0.01),
        Target.AtMost("NativeCache: bytes allocated per TryGet into a reused writer, after warm-up", Unit.BytesPerOp, f => Allocation(f, Native, "get"), 0.01),
        Target.AtMost("NativeCache: bytes allocated per Set replacing a value, after warm-up", Unit.BytesPerOp, f => Allocation(f, Native, "set"), 0.01),
    ];

    private static double? Allocation(Figures f, string variant, string op) => f.Value(variant, m => m.AllocatedBytesPerOp, AtFull(f, op));

    /// <inheritdoc/>
    /// <remarks>NativeCache against the cache a user has (MemoryCache): the pause share, the mix at 2 threads, and the hit ratio on the Zipf trace against ConcurrentLfu at the same entries beside it.</remarks>
    public override Headline Headline => new(
        new Metric("NativeCache: full GC pause with the cache full, share of MemoryCache's (lower is better)", Unit.Ratio, f => Ratio(f, Native, Memory, "full-gc")),
        Mix(Native, Memory, 2),
        new Metric("hit ratio, Zipf 0.9: NativeCache vs ConcurrentLfu holding as many entries", Unit.Ratio, f => HitRatioAgainstLfu(f, NativeCacheTraces.Zipf, NativeCacheTraces.Matched)));

    /// <inheritdoc/>
    public override IReadOnlyList<ParameterSpec> DescribeParameters(RunSettings settings)
    {
        var plan = new NativeCachePlan(Native, NativeCacheProbe.Entries(settings), NativeCacheProbe.OverflowBudget(settings));
        static string[] Texts(IEnumerable<int> values) => [.. values.Distinct().Select(v => v.ToString(CultureInfo.InvariantCulture))];
        return
        [
            new("entries", "entries stored when measured: the pause phase stops at a quarter, half and all of its entries (targets at the largest; quick mode at all only), the memory phase after half, once and twice its budget's bytes; the throughput at all",
                Texts(plan.Checkpoints.Concat(plan.OverflowCheckpoints))),
            new("op", "memory-growth: the resident set's growth after a full collection ÷ the budget, the cache filled past it; full-gc: one blocking compacting gen-2 collection with the cache full (wall clock), after an untimed one that settles the fill (a managed cache is filled with collections suspended); "
                + "managed-bytes: managed heap growth per entry; get, set, mix: reads copying each hit into a reused writer, writes replacing a value with one of a new random size, 95% reads / 5% writes, Zipf 0.99 keys; "
                + "throughput-hits: the share of reads that hit after the throughput phases; hit-ratio: a trace's hit ratio per replica; "
                + $"{NativeCacheTraces.PairedOp}: per replica, NativeCache's hit ratio ÷ ConcurrentLfu's on the same trace and keys",
                ["memory-growth", "full-gc", "managed-bytes", "get", "set", "mix", "throughput-hits", "hit-ratio", NativeCacheTraces.PairedOp]),
            new("threads", "threads running the reads (get), writes (set) and the mix", ["1", "2"]),
            new("trace", "hit-ratio traces: Zipf 0.9; Zipf 0.9 with a one-pass scan of fresh keys after every working set's worth; a loop a tenth larger than the cache", [.. NativeCacheTraces.All]),
            new("capacity", "ConcurrentLfu's capacity on the traces", [NativeCacheTraces.Matched, NativeCacheTraces.ByBytes]),
        ];
    }

    /// <inheritdoc/>
    /// <remarks>Quick mode's later launches measure NativeCache's memory growth alone: the resident set of their own
    /// process, which another process's work does not move.</remarks>
    public override bool LaterQuickLaunchesTimeNothing => true;

    /// <inheritdoc/>
    public override void Run(ExperimentContext context)
    {
        // Quick mode measures in its first launch: a million entries filled into six caches three times over was most of
        // the lab's five minutes. The throughput takes as many interleaved samples there as the three launches would
        // (NativeCacheProbe), so its interval is that one process's; the traces' replays are deterministic; NativeCache's
        // pause and managed bytes per entry are three settled collections in its child, each weighed at its collection,
        // so their interval is that process's too. The later launches repeat only the figure a process gives once, its
        // memory growth (first thing in a fresh process), so it has the three observations a verdict needs; a later
        // launch is itself a fresh process that has done nothing else yet, so it measures it in its own process rather
        // than starting a child (a process start and the lab's start-up fewer), and fills no million entries for a
        // pause its first launch already took three times. Full mode runs everything in every launch.
        var plan = new NativeCachePlan(Native, NativeCacheProbe.Entries(context.Settings), NativeCacheProbe.OverflowBudget(context.Settings));
        var timeout = TimeSpan.FromMinutes(context.Settings.Pick(smoke: 2, quick: 5, full: 30));
        if (context.Settings.Mode == RunMode.Quick && context.Settings.Launch > 0)
        {
            NativeCacheProbe.Run(context, plan, throughput: false, pauses: false);
            return;
        }
        // Quick mode's children are the caches a target reads (the others' figures are full mode's). The hit-ratio replays
        // run here in the children's untimed windows (their fills, settling collections and inputs' set-up), parked before
        // a child times anything; what is left runs once the children are done.
        using (var replays = new NativeCacheTraces.Replays(context.Settings, context.Cancellation))
        {
            foreach (string variant in context.Settings.Mode == RunMode.Quick ? CacheSubjects.Judged : CacheSubjects.Caches)
            {
                var child = context.RunChild("run", (plan with { Variant = variant }).ToArguments(), environment: null, timeout, replays.Work);
                foreach (var m in child.Measurements) context.Record(m);
                foreach (string note in child.Notes) context.Note($"{variant}: {note}");
            }
            replays.Record(context);
        }
        NativeCacheTraces.Describe(context);
        AddTables(context, plan);
        context.Note($"Entries: {plan.Entries:N0} keys of 16 to 48 ASCII characters (\"key:\", the index, letters) and values of 64 to 512 bytes, lengths uniform (mean {NativeCacheWorkload.MeanEntryBytes} B of key and value). "
            + $"The pause and throughput phases use a budget that holds every entry ({Format.Value(plan.FullBudget, "bytes")}): MemoryCache's SizeLimit with each entry's Size its key and value bytes, "
            + $"ConcurrentLru and ConcurrentLfu at {plan.Entries:N0} entries, FASTER's log at the power of two nearest the budget, NativeCache's MaxBytes. The fill formats each key and keeps none: only the cache's objects stay alive. "
            + "Like Caffeine's, NativeCache's frequency sketch counts reads only once the cache has taken half its budget's blocks (a cache below that evicts nothing soon): at this budget, which holds every entry with room to spare, a hit may only mark its entry; the hit-ratio traces, at a quarter of the working set, run past half early.");
        context.Note($"Memory: a fresh cache at a budget of {Format.Value(plan.OverflowBudget, "bytes")} (the count-bounded ones at the budget ÷ {NativeCacheWorkload.MeanEntryBytes} B) filled with twice its bytes, first thing in the child; "
            + "growth is the resident set after a full collection, above the start (quick mode's later launches: first thing in the launch's own process). ConcurrentDictionary has no bound.");
        if (context.Settings.Mode == RunMode.Quick)
        {
            context.Note($"Quick mode: the caches a target reads ({string.Join(", ", CacheSubjects.Judged)}), measured in the first launch, each throughput cell with {context.Settings.Launches} launches' worth of interleaved samples; "
                + "the pause at the full entry count only, one settled collection for each anchor and three for NativeCache (its pause and managed bytes per entry: their interval is that process's); memory growth and the reads' and writes' own cells of NativeCache only (one launch's rounds of their own, before the mix: the allocation targets read their bytes per operation, no target their time), no key floor (no target reads it); the later launches repeat NativeCache's memory growth, each first thing in its own process, side by side after the first launch (they time nothing). Full mode measures every cache in every launch.");
        }
        context.Note("Throughput: keys as a request brings them. Before timing, each position of the Zipf stream gets a fresh string of its key, made in stream order (FASTER's child: its UTF-8 bytes instead); "
            + "the string-keyed caches look up that string, NativeCache takes it as a span and FASTER the bytes. The request's key is read sequentially, so it is in cache; the key the cache stored is not: "
            + "a managed cache compares the request's string with its stored one character by character (never the same instance), NativeCache and FASTER compare bytes inline in their entries. "
            + "The two threads start half the stream apart. Every 20th operation of the mix replaces the key's value with one of a new random size; each thread copies hits into its own reused ArrayBufferWriter. "
            + "Floors, in NativeCache's child: after the cache's figures, in rounds of their own, the key and the copy (the request's key encoded to UTF-8 and hashed as NativeCache does, then the entry's value copied into the writer from its own slot of one flat native block of a slot of 520 B an entry, on transparent huge pages where the system has them as NativeCache's blocks are, found by the entry's index: the one random access to memory any cache's hit pays, with no lookup; a write copies the new value into the slot) "
            + "then, in the same rounds, the key, the index and the copy (the same key and hash, then ONE load of a 4-byte slot reference from a table of as many buckets as NativeCache's index has at the budget, "
            + $"{FloorIndex.BucketsFor(plan.FullBudget):N0}, on huge pages where the system has them, at the hash's low bits as NativeCache picks its bucket, then the copy from the slot it names: the second dependent access to memory any cache pays that finds a value by its key through a hash index; "
            + "it stores and compares no key: where keys share a bucket it names the last one filled, and a lookup of the others copies that entry's value; a write copies the new value into the slot the bucket names; quick mode: its 2-thread cell with one launch's samples, as no target reads it), "
            + "and, in the cache's rounds (full mode), the key alone (encoded and hashed, nothing stored or copied).");
        foreach (int threads in new[] { 1, 2 })
        {
            var f = new Figures(context.Measurements, random: null);
            if (IndexedCeiling(f, Memory, threads) is not { } ceiling) continue;
            string native = IndexedCeiling(f, Native, threads) is { } n ? Unit.Ratio.Format(n) : "n/a";
            context.Note($"The indexed floor, mix at {Format.Count(threads, "thread")}: MemoryCache's time ÷ the indexed floor's {Unit.Ratio.Format(ceiling)}, the most a cache that finds its value through one load from an index of NativeCache's size could reach against MemoryCache in this run (a smaller index, more often in the processor's cache, would lower it) (the target asks 3x; its AgainstFloor stays on the copy floor); "
                + $"NativeCache's time ÷ the indexed floor's {native}, how far NativeCache is from that floor.");
        }
    }

    /// <summary><paramref name="variant"/>'s time per operation of the mix at <paramref name="threads"/> over the indexed floor's, same run.</summary>
    internal static double? IndexedCeiling(Figures f, string variant, int threads)
        => f.Median(variant, AtFull(f, "mix", threads)) / f.Median(IndexFloor, AtFull(f, "mix", threads));

    /// <summary>The pause, memory and throughput of each cache beside MemoryCache's, and the hit ratios against ConcurrentLfu.</summary>
    internal static void AddTables(ExperimentContext context, NativeCachePlan plan)
    {
        var f = new Figures(context.Measurements, random: null);
        string Value(double? value, Unit unit) => value is { } v ? unit.Format(v) : "n/a";
        var rows = CacheSubjects.Caches.Where(v => f.Find(v, AtFull(f, "full-gc")) is not null).Select(v => (string[])
        [
            v,
            Value(f.Median(v, AtFull(f, "full-gc")), Unit.Milliseconds),
            Value(f.Median(v, AtFull(f, "managed-bytes")), "B/entry"),
            Value(f.Median(v, AtFull(f, "memory-growth")), Unit.Ratio),
            Value(f.Median(v, AtFull(f, "mix", 1)), Unit.NsPerOp),
            Value(f.Median(v, AtFull(f, "mix", 2)), Unit.NsPerOp),
            Value(Allocation(f, v, "get"), Unit.BytesPerOp),
            Value(Allocation(f, v, "set"), Unit.BytesPerOp),
        ]).ToArray();
        if (rows.Length > 0)
        {
            context.AddTable(new ResultTable($"Each cache at {plan.Entries:N0} entries (medians; memory growth at twice the memory budget's bytes)",
                ["cache", "full GC pause", "managed/entry", "memory ÷ budget", "mix, 1 thread", "mix, 2 threads", "alloc/get", "alloc/set"], rows));
        }
        var floorRows = new[] { Native, Floor, IndexFloor, KeyFloor, Memory }.Where(v => f.Find(v, AtFull(f, "mix", 1)) is not null).Select(v => (string[])
        [
            v == Memory ? $"{Memory} (its own child)" : v,
            Value(f.Median(v, AtFull(f, "mix", 1)), Unit.NsPerOp),
            Value(f.Median(v, AtFull(f, "mix", 2)), Unit.NsPerOp),
            Value(IndexedCeiling(f, v, 1), Unit.Ratio),
            Value(IndexedCeiling(f, v, 2), Unit.Ratio),
        ]).ToArray();
        if (floorRows.Length > 2)
        {
            context.AddTable(new ResultTable("The mix in NativeCache's child beside its floors: the key with the value copied from its own slot, the same through one load from an index of NativeCache's size, and the request's key encoded and hashed alone; MemoryCache's from its child (medians; ÷ indexed floor: the row's time over the indexed floor's, MemoryCache's the most an indexed cache could reach against it)",
                ["variant", "mix, 1 thread", "mix, 2 threads", "1 thread ÷ indexed floor", "2 threads ÷ indexed floor"], floorRows));
        }
        var hitRows = NativeCacheTraces.All.Where(t => f.Find(Native, HitRatio(t)) is not null).Select(t => (string[])
        [
            t,
            Value(f.Median(Native, HitRatio(t)), Unit.Percent),
            Value(f.Median(Lfu, HitRatio(t, NativeCacheTraces.Matched)), Unit.Percent),
            Value(f.Median(Lfu, HitRatio(t, NativeCacheTraces.ByBytes)), Unit.Percent),
            Value(HitRatioAgainstLfu(f, t, NativeCacheTraces.Matched), Unit.Ratio),
            Value(HitRatioAgainstLfu(f, t, NativeCacheTraces.ByBytes), Unit.Ratio),
        ]).ToArray();
        if (hitRows.Length > 0)
        {
            context.AddTable(new ResultTable("Hit ratio at a quarter of the working set's bytes (medians of the replicas; the ratios paired replica by replica)",
                ["trace", "NativeCache", $"ConcurrentLfu, {NativeCacheTraces.Matched}", $"ConcurrentLfu, {NativeCacheTraces.ByBytes}", "vs the first", "vs the second"], hitRows));
        }
    }

    /// <inheritdoc/>
    public override void RunChild(string key, IReadOnlyList<string> arguments, ExperimentContext context)
    {
        if (key is not "run") base.RunChild(key, arguments, context);
        NativeCacheProbe.Run(context, NativeCachePlan.Parse(arguments));
    }
}
