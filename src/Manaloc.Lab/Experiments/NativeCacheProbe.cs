using System.Numerics;
using Manaloc.Lab.Platform;
using Cache = Manaloc.Collections.NativeCache;

namespace Manaloc.Lab.Experiments;

/// <summary>What the <c>native-cache</c> parent asks one child process to measure, and its form on the command line.</summary>
/// <param name="Variant">One of <see cref="CacheSubjects.Caches"/>.</param>
/// <param name="Entries">Entries the cache is filled with for the pause and the throughput.</param>
/// <param name="OverflowBudget">The byte budget of the memory phase, filled with twice its bytes.</param>
internal sealed record NativeCachePlan(string Variant, int Entries, long OverflowBudget)
{
    /// <summary>The plan as the child's arguments.</summary>
    public IReadOnlyList<string> ToArguments() => [Variant, Entries.ToString(CultureInfo.InvariantCulture), OverflowBudget.ToString(CultureInfo.InvariantCulture)];

    /// <summary>Reads a plan back from <see cref="ToArguments"/>'s form.</summary>
    /// <exception cref="ArgumentException">Not three arguments, an unknown variant, fewer than 64 entries or a budget below 64 KiB.</exception>
    public static NativeCachePlan Parse(IReadOnlyList<string> arguments)
    {
        ChildPlanArguments.Check(arguments, "native-cache", ["variant", "entries", "overflow budget"], CacheSubjects.Caches);
        if (!int.TryParse(arguments[1], NumberStyles.None, CultureInfo.InvariantCulture, out int entries) || entries < 64)
        {
            throw new ArgumentException($"The native-cache child's entry count must be a whole number of at least 64, not '{arguments[1]}'.", nameof(arguments));
        }
        if (!long.TryParse(arguments[2], NumberStyles.None, CultureInfo.InvariantCulture, out long budget) || budget < 64 * 1024)
        {
            throw new ArgumentException($"The native-cache child's overflow budget must be a whole number of bytes, at least 64 KiB, not '{arguments[2]}'.", nameof(arguments));
        }
        return new NativeCachePlan(arguments[0], entries, budget);
    }

    /// <summary>
    /// The budget that holds every entry of the pause and throughput phases: the power of two at or above 1.25 times
    /// the keys' and values' bytes plus 128 bytes an entry (so FASTER's log, at the power of two nearest it, is the budget itself).
    /// </summary>
    public long FullBudget => (long)BitOperations.RoundUpToPowerOf2((ulong)(Entries * (NativeCacheWorkload.MeanEntryBytes + 128) * 1.25));

    /// <summary>The counts at which the full phase stops to time a collection: a quarter, half, and all of <see cref="Entries"/>.</summary>
    public IReadOnlyList<int> Checkpoints => [Entries / 4, Entries / 2, Entries];

    /// <summary>The entries inserted into the overflow budget when its growth is read: half, once and twice its bytes' worth.</summary>
    public IReadOnlyList<int> OverflowCheckpoints
    {
        get
        {
            int once = CacheSubjects.CapacityFor(OverflowBudget);
            return [once / 2, once, once * 2];
        }
    }
}

/// <summary>
/// The child's side of the native-cache experiment, for one cache in a fresh process: first its memory growth against a
/// byte budget while it is filled with twice the budget's bytes (fresh, so the resident set holds nothing else yet), then
/// the full blocking GC pause and managed bytes per entry while it is filled with every entry, then reads, writes and the
/// 95/5 mix over Zipf keys at 1 and 2 threads (NativeCache's child measures the floor beside it).
/// </summary>
internal static class NativeCacheProbe
{
    /// <summary>Entries of the pause and throughput phases.</summary>
    public static int Entries(RunSettings s) => s.Pick(smoke: 20_000, quick: 1_000_000, full: 10_000_000);

    /// <summary>The memory phase's budget.</summary>
    public static long OverflowBudget(RunSettings s) => s.Pick(smoke: 1L << 20, quick: 32L << 20, full: 256L << 20);

    // Timed after one untimed collection that settles the fill (MeasurePauses), so every one is a settled heap's pause.
    // Each full-mode launch needs a spread of its own (see LiveSetProbe): not divided between launches. Quick mode:
    // NativeCache's child takes three, which give the pause targets their interval (each a millisecond or less, the
    // managed heap holding nothing of the cache's); an anchor takes one settled pause (a second of its child each), the
    // denominator of a ratio hundreds of times within its target, which no spread of NativeCache's samples moves across it.
    private static int FullCollections(RunSettings s, string variant) => s.Pick(smoke: 1, quick: variant == CacheSubjects.Native ? 3 : 1, full: 5);

    /// <summary>
    /// Whether quick mode trims this child to the figures a target reads, so the experiment fits the lab's five minutes:
    /// the memory growth, the reads' and writes' own cells are NativeCache's alone, and the pause is taken with the cache
    /// full only. Smoke and full mode measure every figure of every cache.
    /// </summary>
    private static bool Trimmed(ExperimentContext context) => context.Settings.Mode == RunMode.Quick;

    /// <summary>
    /// Positions in the stream, read round and round by the loops: the quick stream draws as many keys as the cache
    /// holds, so its cold tail is as wide as one pass of the distribution's; each position's key materialized
    /// (<see cref="RequestKeys"/>) takes about 100 bytes as a string (40 as FASTER's UTF-8 bytes), 100 MiB quick and 200 MiB full, beside caches of 0.5 and 5 GiB.
    /// </summary>
    private static int StreamLength(RunSettings s) => s.Pick(smoke: 1 << 12, quick: 1 << 20, full: 1 << 21);

    /// <summary>Runs the plan and records its measurements (see <see cref="NativeCache.DescribeParameters"/>).</summary>
    /// <param name="context">The child's context.</param>
    /// <param name="plan">What to measure.</param>
    /// <param name="throughput">False to stop after the pauses.</param>
    /// <param name="pauses">False to stop after the memory phase (quick mode's later launches); the throughput reads the cache the pauses filled, so it needs them.</param>
    /// <exception cref="ArgumentException">The throughput asked for without the pauses.</exception>
    public static void Run(ExperimentContext context, NativeCachePlan plan, bool throughput = true, bool pauses = true)
    {
        if (throughput && !pauses) throw new ArgumentException("The native-cache throughput reads the cache the pause phase fills: it cannot run without the pauses.", nameof(pauses));
        context.Status($"{plan.Variant}: memory against the budget");
        // Every phase that times nothing is an untimed window (ExperimentContext.Untimed): the parent runs the hit-ratio
        // replays on the cores it leaves idle, and parks them before anything here is timed. The memory phase reads the
        // resident set of this process alone, which the parent's work does not touch.
        if (!Trimmed(context) || plan.Variant == CacheSubjects.Native) context.Untimed(() => MeasureMemory(context, plan));
        if (!pauses) return;
        context.Status($"{plan.Variant}: full collections");
        using var subject = CacheSubjects.Create(plan.Variant, plan.FullBudget, plan.Entries, plan.Entries);
        // The floors of NativeCache's throughput, made and filled now if the throughput follows (see MeasureThroughput):
        // the copy floor and the indexed floor read one store of values, which the indexed floor's fill writes with its index.
        using var floors = throughput && plan.Variant == CacheSubjects.Native ? new Floors(plan) : null;
        // Beside NativeCache's fill, which runs on one thread and is not timed, its child fills the floors' store and index
        // on the core the fill leaves idle instead of seconds of its own, done before the child's first timed collection:
        // half a gigabyte of fresh pages that the system zeroes as they are first written, a second of a core. The store
        // is native: it adds nothing to the managed heap the pause collects, and its managed wrappers are made before the
        // pause phase weighs the heap's start, so they are not counted as the cache's; it is filled on a thread of its own,
        // not the thread pool's, whose first use keeps per-thread objects alive (12 KB, 0.012 B an entry of NativeCache's
        // managed bytes, above that target's 0.01).
        Func<Task>? besideFill = floors is not null ? () => OnThreadOfItsOwn(() => floors.Indexed.Fill(0, plan.Entries), "native-cache-floor-fill") : null;
        MeasurePauses(context, plan, subject, besideFill);
        if (!throughput) return;
        context.Status($"{plan.Variant}: keys and streams");
        // Built after the pauses: the requests' keys are the throughput's, not part of any cache's live set. Untimed:
        // the stream, then its keys in access order, only the form the cache reads (strings, or FASTER's UTF-8 bytes),
        // half the stream on each core, then the strings to the old generation, together in the order they were made,
        // where the timed loops' young collections never copy them (PromoteToOldGeneration). The settling collection
        // before the pause stays: without it the timed one also collected what the fill left young (FASTER's child's
        // trace replays: a pause a hundred times longer) and the promotion moved a managed cache again.
        RequestKeys? built = null;
        context.Untimed(() =>
        {
            built = RequestKeys.Materialize(NativeCacheWorkload.Zipf(plan.Entries, StreamLength(context.Settings), seed: 2), OnBothCores, subject.Reads);
            PromoteToOldGeneration(built);
        });
        var requests = built!;
        MeasureThroughput(context, plan, subject, floors, requests);
    }

    /// <summary>
    /// Brings the request keys' strings to the old generation: two compacting collections of the young generations, each
    /// promoting them one generation in the order they were made, without marking or moving the cache in the old
    /// generation (a full compacting collection here marked and moved a managed cache's million entries again, a
    /// second or more of each managed cache's child spent on nothing measured). Should the runtime have kept any of
    /// them young, a full compacting collection finishes the job.
    /// </summary>
    private static void PromoteToOldGeneration(RequestKeys requests)
    {
        GC.Collect(1, GCCollectionMode.Forced, blocking: true, compacting: true);
        GC.Collect(1, GCCollectionMode.Forced, blocking: true, compacting: true);
        if (!requests.AllInGeneration(GC.MaxGeneration)) GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
    }

    private static void MeasureMemory(ExperimentContext context, NativeCachePlan plan)
    {
        var checkpoints = plan.OverflowCheckpoints;
        var figures = new (long Resident, long Committed, long Held)[checkpoints.Count];
        // The process's first use of the variant's code, on a small cache disposed before the start is read, so the growth is
        // the cache's own and not the first use's constant. Brought to tier 1 (TierUp), not merely jitted: a fill that only
        // reached tier 0 left the tier-1 compiles of the fill path (Set, the eviction and reclamation) to the measured fill,
        // whose JIT arena (the tiering thread's malloc arena, ~2.7 MiB resident), code heap and newly touched CoreLib code
        // pages were ~4 MiB of the growth, about an eighth of the quick budget, none of it the cache's. Small (a
        // thirty-second of the budget), so whatever of its memory the allocator keeps for reuse flatters the figure by no
        // more. Its calls go round keys worth twice its budget (the entries it was made for), so it overflows again and
        // again and eviction and reclamation tier up too.
        long firstUseBudget = Math.Max(Cache.MinimumMaxBytes, plan.OverflowBudget / 32);
        int firstUseCapacity = CacheSubjects.CapacityFor(firstUseBudget);
        int firstUseKeys = firstUseCapacity * 2;
        using (var firstUse = CacheSubjects.Create(plan.Variant, firstUseBudget, firstUseCapacity, firstUseKeys))
        {
            const int EntriesPerCall = 256;
            int next = 0;
            TierUp.Run(context, [() =>
            {
                int end = Math.Min(next + EntriesPerCall, firstUseKeys);
                firstUse.Fill(next, end);
                next = end == firstUseKeys ? 0 : end;
            }]);
        }
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        long committedBefore = GC.GetGCMemoryInfo().TotalCommittedBytes;
        long residentBefore = ResidentMemory.Current();
        using (var subject = CacheSubjects.Create(plan.Variant, plan.OverflowBudget, CacheSubjects.CapacityFor(plan.OverflowBudget), checkpoints[^1]))
        {
            int filled = 0;
            for (int c = 0; c < checkpoints.Count; c++)
            {
                context.Cancellation.ThrowIfCancellationRequested();
                subject.Fill(filled, checkpoints[c]);
                filled = checkpoints[c];
                // What the process holds once the garbage of evictions and replaced values is gone: what a budget bounds.
                GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
                figures[c] = (ResidentMemory.Current() - residentBefore, GC.GetGCMemoryInfo().TotalCommittedBytes - committedBefore, subject.Count);
            }
        }
        for (int c = 0; c < checkpoints.Count; c++)
        {
            context.RecordSamples(plan.Variant, Unit.Ratio, [(double)figures[c].Resident / plan.OverflowBudget], Parameters.Of(("entries", (long)checkpoints[c]), ("op", "memory-growth")),
                metrics: new Dictionary<string, double>
                {
                    ["budgetBytes"] = plan.OverflowBudget,
                    ["residentBytes"] = figures[c].Resident,
                    ["committedBytes"] = figures[c].Committed,
                    ["entriesHeld"] = figures[c].Held,
                });
        }
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
    }

    /// <param name="context">The child's context.</param>
    /// <param name="plan">What to measure.</param>
    /// <param name="subject">The empty cache.</param>
    /// <param name="besideFill">Untimed work to start once the heap's start is read and to wait for as the first fill ends,
    /// before any collection: it shares the machine with the fill only, never with a timed collection.</param>
    private static void MeasurePauses(ExperimentContext context, NativeCachePlan plan, CacheSubject subject, Func<Task>? besideFill = null)
    {
        IReadOnlyList<int> checkpoints = Trimmed(context) ? [plan.Entries] : plan.Checkpoints;
        var wall = new double[checkpoints.Count][];
        var paused = new double[checkpoints.Count][];
        for (int c = 0; c < checkpoints.Count; c++)
        {
            wall[c] = new double[c == checkpoints.Count - 1 ? FullCollections(context.Settings, plan.Variant) : 1];
            paused[c] = new double[wall[c].Length];
        }
        var managed = new long[checkpoints.Count][];
        var held = new long[checkpoints.Count];
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        long managedBefore = LiveBytesAfterFullCollection();
        var beside = besideFill?.Invoke();
        int filled = 0;
        try
        {
            for (int c = 0; c < checkpoints.Count; c++)
            {
                context.Cancellation.ThrowIfCancellationRequested();
                // One untimed full collection settles what the fill left young, as collections during the fill would have;
                // then full blocking compacting collections, the heap weighed right after each without collecting again (read
                // at the collection, so what is allocated between them does not count): a sample of managed bytes per pause.
                // The fill and the settling collection are an untimed window (the window writes and reads through the standard
                // handles directly, keeping no object alive, so the managed bytes are the cache's alone).
                int from = filled, to = checkpoints[c];
                context.Untimed(() =>
                {
                    FillSuspendingCollections(subject, from, to);
                    if (beside is not null)
                    {
                        beside.GetAwaiter().GetResult();
                        beside = null;
                    }
                    GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
                });
                filled = checkpoints[c];
                managed[c] = new long[wall[c].Length];
                for (int i = 0; i < wall[c].Length; i++)
                {
                    LiveSetProbe.MeasureFullCollections(wall[c].AsSpan(i, 1), paused[c].AsSpan(i, 1));
                    managed[c][i] = LiveBytesAfterFullCollection() - managedBefore;
                }
                held[c] = subject.Count;
            }
        }
        finally
        {
            // Should the phase fail before it waits, the work beside may still be writing into what the caller frees once
            // this returns (NativeCache's copy floor, native memory): it ends first.
            if (beside is not null) ((IAsyncResult)beside).AsyncWaitHandle.WaitOne();
        }
        for (int c = 0; c < checkpoints.Count; c++)
        {
            var p = Parameters.Of(("entries", (long)checkpoints[c]));
            var metrics = new Dictionary<string, double> { ["totalPauseDurationMs"] = Statistics.From(paused[c]).Median, ["entriesHeld"] = held[c], ["managedBytes"] = managed[c][^1] };
            context.RecordSamples(plan.Variant, Unit.Milliseconds, wall[c], p.With("op", "full-gc"), metrics: metrics);
            int entries = checkpoints[c];
            context.RecordSamples(plan.Variant, "B/entry", [.. managed[c].Select(bytes => Math.Max(0.0, (double)bytes / entries))], p.With("op", "managed-bytes"), metrics: metrics);
        }
        if (held[^1] >= 0 && held[^1] < plan.Entries)
        {
            context.Note($"{plan.Variant} held {held[^1]:N0} of the {plan.Entries:N0} entries at a budget of {Format.Value(plan.FullBudget, "bytes")}: its lookups of the others miss.");
        }
    }

    /// <summary>
    /// The managed bytes the last full blocking collection left alive (each generation's size after it, less its free
    /// space): what the heap holds, read at the collection. <c>GC.GetTotalMemory(false)</c> also counts the unused rest
    /// of every thread's allocation context (up to 8 KiB each) as in use, so one small allocation on any thread after
    /// the collection moved a million-entry cache's bytes per entry by ±0.008, most of the 0.01 B target.
    /// </summary>
    internal static long LiveBytesAfterFullCollection()
    {
        long live = 0;
        foreach (var generation in GC.GetGCMemoryInfo(GCKind.FullBlocking).GenerationInfo) live += generation.SizeAfterBytes - generation.FragmentationAfterBytes;
        return live;
    }

    /// <summary>A generous bound on the managed bytes a managed cache keeps per entry (its entry objects, the key string, the value array): the no-GC region of its fill.</summary>
    private const long ManagedBytesPerEntry = 768;

    /// <summary>
    /// Stores entries [<paramref name="from"/>, <paramref name="to"/>): a managed cache with collections suspended (its
    /// fill keeps nearly everything it allocates, so the collections it would trigger only copy the growing cache from
    /// generation to generation, seconds of a quick run that measure nothing), half on each core through each thread's
    /// own operations (its writes lock per bucket; the fill is not timed, and the pause is of the cache it leaves, the
    /// same entries in either order); the off-heap caches as they are, on one thread (NativeCache's writers share one
    /// lock, and FASTER's fill from two sessions was no faster).
    /// </summary>
    private static void FillSuspendingCollections(CacheSubject subject, int from, int to)
    {
        if (subject.Variant is CacheSubjects.Native or CacheSubjects.Faster)
        {
            subject.Fill(from, to);
            return;
        }
        int middle = from + (to - from) / 2;
        // The region is the process's: both threads' allocations count against it.
        NoGcRegion.Run((to - from) * ManagedBytesPerEntry + (16 << 20), () =>
        {
            OnBothCores(half => subject.Fill(half == 0 ? from : middle, half == 0 ? middle : to, thread: half));
            return true;
        });
    }

    /// <summary>
    /// NativeCache's floors over one store of values (<see cref="FloorStore"/>, a slot an entry): the copy floor, which
    /// finds a slot by the entry's index, and the indexed floor, which finds it through a table as large as NativeCache's
    /// index at the plan's budget. Filling <see cref="Indexed"/> fills both (the slots and the index).
    /// </summary>
    internal sealed class Floors : IDisposable
    {
        private readonly FloorStore _store;

        public Floors(NativeCachePlan plan)
        {
            _store = new FloorStore(plan.Entries);
            try
            {
                Copy = CacheSubjects.CreateFloor(_store, ownsStore: false);
                Indexed = CacheSubjects.CreateIndexFloor(plan.FullBudget, _store, ownsStore: false);
            }
            catch
            {
                _store.Dispose();
                throw;
            }
        }

        /// <summary>The copy floor: the value copied from the entry's own slot, found by its index.</summary>
        public CacheSubject Copy { get; }

        /// <summary>The indexed floor: the value copied from the slot the key's bucket names.</summary>
        public CacheSubject Indexed { get; }

        public void Dispose()
        {
            Indexed.Dispose();
            Copy.Dispose();
            _store.Dispose();
        }
    }

    /// <summary>Runs <paramref name="work"/> on a new background thread, which leaves nothing alive once it ends; the task ends with it (faulted if the work threw).</summary>
    private static Task OnThreadOfItsOwn(Action work, string name)
    {
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var thread = new Thread(() =>
        {
            try
            {
                work();
                done.SetResult();
            }
            catch (Exception e)
            {
                done.SetException(e);
            }
        })
        { IsBackground = true, Name = name };
        thread.Start();
        return done.Task;
    }

    /// <summary>Runs <paramref name="half"/>(0) and <paramref name="half"/>(1) side by side on two threads (untimed set-up), or one after the other on a single core.</summary>
    private static void OnBothCores(Action<int> half)
    {
        if (Environment.ProcessorCount < 2)
        {
            half(0);
            half(1);
            return;
        }
        LabThreads.RunTogether(2, half, name: "native-cache-setup");
    }

    /// <param name="context">The child's context.</param>
    /// <param name="plan">What to measure.</param>
    /// <param name="subject">The cache, full.</param>
    /// <param name="floors">NativeCache's child: the copy and indexed floors, filled (else null).</param>
    /// <param name="requests">The request keys.</param>
    private static void MeasureThroughput(ExperimentContext context, NativeCachePlan plan, CacheSubject subject, Floors? floors, RequestKeys requests)
    {
        var p = Parameters.Of(("entries", (long)plan.Entries));
        var sinks = new long[CacheSubject.MaxThreads * 8];
        // Quick mode measures in its first launch alone (NativeCache.Run): as many samples there as all its launches would take.
        var sampling = context.Settings.Mode == RunMode.Quick
            ? new ExperimentContext(context.ExperimentName, context.Settings with { Samples = context.Settings.Samples * context.Settings.Launches }, cancellation: context.Cancellation)
            : context;
        CacheSubject? keyFloor = null;
        try
        {
            var cells = new List<(string, Parameters, Action<long>)>();
            var ownCells = new List<(string, Parameters, Action<long>)>();
            if (!Trimmed(context) || plan.Variant == CacheSubjects.Native)
            {
                ownCells.Add((subject.Variant, p.With("op", "get").With("threads", 1), n => sinks[0] += subject.Gets(0, requests, n)));
                ownCells.Add((subject.Variant, p.With("op", "set").With("threads", 1), n => sinks[0] += subject.Sets(0, requests, n)));
            }
            // Quick mode: the reads' and writes' own cells give the allocation targets their bytes per operation (exact at any
            // sample count: millions of operations a sample, none allocating) and no target reads their time, so they take
            // one launch's rounds of their own before the mix, not the mix's rounds. Full mode samples them beside the mix.
            if (Trimmed(context))
            {
                if (ownCells.Count > 0) sampling.Compare(ownCells, rounds: context.Settings.Samples);
            }
            else
            {
                cells.AddRange(ownCells);
            }
            cells.Add((subject.Variant, p.With("op", "mix").With("threads", 1), n => sinks[0] += subject.Mix(0, requests, n)));
            if (plan.Variant == CacheSubjects.Native && !Trimmed(context))
            {
                // The key floor beside NativeCache in the same rounds: the request's key encoded and hashed and nothing else
                // (what the harness's key costs any cache taking it). No target reads it: full mode's figure.
                keyFloor = CacheSubjects.Create(CacheSubjects.KeyFloor, plan.FullBudget, plan.Entries, plan.Entries);
                var k = keyFloor;
                cells.Add((CacheSubjects.KeyFloor, p.With("op", "mix").With("threads", 1), n => sinks[0] += k.Mix(0, requests, n)));
            }
            sampling.Compare(cells);
            sampling.MeasureThreads(subject.Variant, 2, (t, n) => sinks[t * 8] += subject.Mix(t, requests, n), p.With("op", "mix"));
            if (keyFloor is not null) sampling.MeasureThreads(CacheSubjects.KeyFloor, 2, (t, n) => sinks[t * 8] += keyFloor.Mix(t, requests, n), p.With("op", "mix"));
            if (plan.Variant == CacheSubjects.Native)
            {
                // The memory floors after the cache's figures, in their own rounds: the key encoded and hashed and each hit's bytes
                // copied from its own slot of a flat store, found by the entry's index (the copy floor) or through one load from
                // an index of NativeCache's size (the indexed floor). Filled beside the cache's fill, long before any timing,
                // and read only now: their random reads between the cache's cells (or their fill just before them) evicted the
                // cache's hot lines and slowed the cache's one-thread mix by about a third on a quiet machine. The floors' reads
                // alone are read by no target: full mode's figures.
                var f = floors ?? throw new InvalidOperationException("NativeCache's throughput needs its floors, filled beside the cache's fill.");
                var floorCells = new List<(string, Parameters, Action<long>)>();
                foreach (var floor in new[] { f.Copy, f.Indexed })
                {
                    if (!Trimmed(context)) floorCells.Add((floor.Variant, p.With("op", "get").With("threads", 1), n => sinks[0] += floor.Gets(0, requests, n)));
                    floorCells.Add((floor.Variant, p.With("op", "mix").With("threads", 1), n => sinks[0] += floor.Mix(0, requests, n)));
                }
                sampling.Compare(floorCells);
                sampling.MeasureThreads(CacheSubjects.Floor, 2, (t, n) => sinks[t * 8] += f.Copy.Mix(t, requests, n), p.With("op", "mix"));
                // The indexed floor's two threads: no target reads it (the notes' ceiling against MemoryCache does), so it takes
                // the child's own samples: in quick mode one launch's, not the three launches' the copy floor's target ratios take.
                context.MeasureThreads(CacheSubjects.IndexFloor, 2, (t, n) => sinks[t * 8] += f.Indexed.Mix(t, requests, n), p.With("op", "mix"));
            }
            if (!ReferenceEquals(sampling, context)) foreach (var m in sampling.Measurements) context.Record(m);

            // Every key was stored and the budget holds them all: a lookup that misses is the cache's loss, stated beside the figures.
            long probes = Math.Min(requests.Length, 1 << 16);
            long hits = subject.Gets(0, requests, probes);
            context.RecordSamples(subject.Variant, Unit.Percent, [100.0 * hits / probes], p.With("op", "throughput-hits"), lowerIsBetter: false);
            if (hits < probes) context.Note($"{subject.Variant}: {probes - hits:N0} of {probes:N0} lookups after the throughput phases missed.");
        }
        finally
        {
            keyFloor?.Dispose();
        }
        GC.KeepAlive(sinks);
    }
}
