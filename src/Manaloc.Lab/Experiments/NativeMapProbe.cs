using Manaloc.Lab.Platform;

namespace Manaloc.Lab.Experiments;

/// <summary>What the <c>native-map</c> parent asks one child process to measure, and its form on the command line.</summary>
/// <param name="Variant">One of <see cref="MapSubjects.All"/>.</param>
/// <param name="Entries">Entries the map grows to.</param>
internal sealed record NativeMapPlan(string Variant, long Entries)
{
    /// <summary>The plan as the child's arguments.</summary>
    public IReadOnlyList<string> ToArguments() => [Variant, Entries.ToString(CultureInfo.InvariantCulture)];

    /// <summary>Reads a plan back from <see cref="ToArguments"/>'s form.</summary>
    /// <exception cref="ArgumentException">Not two arguments, an unknown variant, or an entry count that is not a whole number of at least 4.</exception>
    public static NativeMapPlan Parse(IReadOnlyList<string> arguments)
    {
        ChildPlanArguments.Check(arguments, "native-map", ["variant", "entries"], MapSubjects.All);
        if (!long.TryParse(arguments[1], NumberStyles.None, CultureInfo.InvariantCulture, out long entries) || entries < 4)
        {
            throw new ArgumentException($"The native-map child's entry count must be a whole number of at least 4, not '{arguments[1]}'.", nameof(arguments));
        }
        return new NativeMapPlan(arguments[0], entries);
    }

    /// <summary>The counts at which the growth is stopped and weighed: a quarter, half, and all of <see cref="Entries"/>.</summary>
    public IReadOnlyList<long> Checkpoints => [Entries / 4, Entries / 2, Entries];
}

/// <summary>
/// The child's side of the native-map experiment, for one variant in a fresh process: grow the map one insert at a time
/// to each checkpoint (timing every insert, counting allocation, tracking the peak resident set), weigh it and time full
/// blocking collections with it alive, and measure lookups and the read/update mix at the full count.
/// </summary>
internal static class NativeMapProbe
{
    /// <summary>Entries the map grows to.</summary>
    public static long Entries(RunSettings s) => s.Pick(smoke: 20_000L, quick: 1_000_000L, full: 10_000_000L);

    // Each launch needs a spread of its own (see LiveSetProbe): not divided between launches.
    private static int FullCollections(RunSettings s) => s.Pick(smoke: 1, quick: 3, full: 5);

    /// <summary>Keys in each lookup stream, a power of two: read round and round by the lookup loops.</summary>
    private static int StreamLength(RunSettings s) => s.Pick(smoke: 1 << 12, quick: 1 << 20, full: 1 << 21);

    /// <summary>Runs the plan and records its measurements (see <see cref="NativeMap.DescribeParameters"/>).</summary>
    public static void Run(ExperimentContext context, NativeMapPlan plan)
    {
        string variant = plan.Variant;
        context.Status($"{variant}: lookup streams");
        // Built first, so they are part of every variant's baseline alike (and their shuffles' garbage is gone before it).
        var uniform = NativeMapWorkload.Uniform(plan.Entries, StreamLength(context.Settings), seed: 1);
        var zipf = NativeMapWorkload.Zipf(plan.Entries, StreamLength(context.Settings), seed: 2);
        BringToTierOne(context, variant, plan.Entries);

        // Everything the growth phase keeps is allocated before the baseline: what the lab records stays off the heap it weighs.
        var checkpoints = plan.Checkpoints.ToArray();
        var figures = new CheckpointFigures[checkpoints.Length];
        var wall = new double[checkpoints.Length][];
        for (int c = 0; c < checkpoints.Length; c++) wall[c] = new double[c == checkpoints.Length - 1 ? FullCollections(context.Settings) : 1];
        var paused = new double[checkpoints.Length][];
        for (int c = 0; c < checkpoints.Length; c++) paused[c] = new double[wall[c].Length];

        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        long managedBefore = GC.GetTotalMemory(forceFullCollection: false);
        long committedBefore = GC.GetGCMemoryInfo().TotalCommittedBytes;
        long residentBefore = ResidentMemory.Current();
        bool peakReset = ResidentMemory.ResetPeak();

        using var subject = MapSubjects.Create(variant, plan.Entries);
        long grown = 0, allocated = 0, worstTicks = 0;
        for (int c = 0; c < checkpoints.Length; c++)
        {
            context.Cancellation.ThrowIfCancellationRequested();
            long before = GC.GetAllocatedBytesForCurrentThread();
            worstTicks = Math.Max(worstTicks, subject.Grow(grown, checkpoints[c]));
            allocated += GC.GetAllocatedBytesForCurrentThread() - before;
            grown = checkpoints[c];
            long peak = ResidentMemory.Peak() - residentBefore;

            // Several timed collections at the run's size (its targets), one on the way (a chart's point). Each is a full
            // blocking compacting collection, so the heap is weighed right after them without collecting again.
            LiveSetProbe.MeasureFullCollections(wall[c], paused[c]);

            long managed = GC.GetTotalMemory(forceFullCollection: false) - managedBefore;
            long committed = GC.GetGCMemoryInfo().TotalCommittedBytes - committedBefore;
            long resident = ResidentMemory.Current() - residentBefore;
            figures[c] = new CheckpointFigures(peak, worstTicks, allocated, managed, committed, resident);
        }

        if (!peakReset) context.Note("The peak resident set could not be reset here: peak memory counts everything since the child started.");
        for (int c = 0; c < checkpoints.Length; c++) Record(context, variant, checkpoints[c], figures[c], wall[c], paused[c]);
        MeasureLookups(context, subject, plan.Entries, uniform, zipf);
    }

    /// <summary>What the growth phase read at one checkpoint (bytes are above the start of the growth).</summary>
    private readonly record struct CheckpointFigures(long PeakResident, long WorstInsertTicks, long Allocated, long Managed, long Committed, long Resident);

    private static void Record(ExperimentContext context, string variant, long entries, CheckpointFigures f, double[] wallMs, double[] pausedMs)
    {
        var p = Parameters.Of(("entries", entries));
        context.RecordSamples(variant, Unit.Bytes, [f.PeakResident], p.With("op", "peak-memory"));
        context.RecordSamples(variant, Unit.Milliseconds, [LabClock.Milliseconds(f.WorstInsertTicks)], p.With("op", "longest-insert"));
        context.RecordSamples(variant, Unit.BytesPerOp, [(double)f.Allocated / entries], p.With("op", "insert-allocation"));
        context.RecordSamples(variant, Unit.Milliseconds, wallMs, p.With("op", "full-gc"), metrics: new Dictionary<string, double>
        {
            ["totalPauseDurationMs"] = Statistics.From(pausedMs).Median, // the runtime's own pause count, beside the wall clock
        });
        // What the resident set grew by beyond what the GC committed: native memory, whoever allocated it (the map, or
        // the runtime's own bookkeeping of a larger heap).
        long native = Math.Max(0, f.Resident - Math.Max(0, f.Committed));
        var weights = new Dictionary<string, double>
        {
            ["managedBytes"] = f.Managed,
            ["committedBytes"] = f.Committed,
            ["residentBytes"] = f.Resident,
            ["nativeBytes"] = native,
        };
        context.RecordSamples(variant, "B/entry", [Math.Max(0.0, (double)f.Managed / entries)], p.With("op", "managed-bytes"), metrics: weights);
        context.RecordSamples(variant, "B/entry", [(double)native / entries], p.With("op", "native-bytes"), metrics: weights);
    }

    /// <summary>Lookups of hits (uniform and Zipf keys) at 1 thread side by side, at 2 threads where the map allows, and the 95/5 mix at 2 threads.</summary>
    private static void MeasureLookups(ExperimentContext context, MapSubject subject, long entries, long[] uniform, long[] zipf)
    {
        string variant = subject.Variant;
        var p = Parameters.Of(("entries", entries));
        long sink = 0;
        context.Compare(
        [
            (variant, p.With("op", "lookup-uniform").With("threads", 1), n => sink += subject.Lookups(0, uniform, n)),
            (variant, p.With("op", "lookup-zipf").With("threads", 1), n => sink += subject.Lookups(0, zipf, n)),
        ]);
        var sinks = new long[MapSubject.MaxThreads * 8];
        if (subject.ConcurrentReads)
        {
            context.MeasureThreads(variant, 2, (t, n) => sinks[t * 8] += subject.Lookups(t, uniform, n), p.With("op", "lookup-uniform"));
            context.MeasureThreads(variant, 2, (t, n) => sinks[t * 8] += subject.Lookups(t, zipf, n), p.With("op", "lookup-zipf"));
        }
        if (subject.ConcurrentWrites)
        {
            context.MeasureThreads(variant, 2, (t, n) => sinks[t * 8] += subject.Mix(t, zipf, n), p.With("op", "mix"));
        }
        GC.KeepAlive(sink);
        GC.KeepAlive(sinks);
    }

    /// <summary>
    /// Grows, reads and updates a small map of the variant in many short calls and frees it, so the measured growth runs
    /// tier-1 code with its statics initialised (a first resize must not be timed with its JIT) and the first use of the
    /// variant allocates nothing that is counted.
    /// </summary>
    /// <summary>Brings the variant's insert, lookup and mix paths to tier 1 on a small map of its own, before anything is weighed or timed.</summary>
    private static void BringToTierOne(ExperimentContext context, string variant, long entries)
    {
        long size = Math.Min(entries, 32_768);
        var stream = NativeMapWorkload.Uniform(size, 1024, seed: 3);
        using var small = MapSubjects.Create(variant, size);
        long step = Math.Max(1, size / 64);
        for (long at = 0; at < size; at += step) small.Grow(at, Math.Min(size, at + step));
        Action lookups = () => small.Lookups(0, stream, 256);
        Action mix = () => small.Mix(0, stream, 256);
        TierUp.Run(context, small.ConcurrentWrites ? [lookups, mix] : [lookups], rounds: 1);
    }
}
