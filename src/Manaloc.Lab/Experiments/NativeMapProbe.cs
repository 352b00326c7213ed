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
/// blocking collections with it alive. The lookups are measured elsewhere, every variant side by side (<see cref="NativeMapLookups"/>).
/// </summary>
internal static class NativeMapProbe
{
    /// <summary>Entries the map grows to.</summary>
    public static long Entries(RunSettings s) => s.Pick(smoke: 20_000L, quick: 1_000_000L, full: 10_000_000L);

    // Each launch needs a spread of its own (see LiveSetProbe): not divided between launches.
    private static int FullCollections(RunSettings s) => s.Pick(smoke: 1, quick: 3, full: 5);

    /// <summary>Runs the plan and records its measurements (see <see cref="NativeMap.DescribeParameters"/>).</summary>
    public static void Run(ExperimentContext context, NativeMapPlan plan)
    {
        string variant = plan.Variant;
        bool timedAgainstFloor = MapSubjects.TimedAgainstFloor.Contains(variant);
        BringToTierOne(context, variant, plan.Entries, timedAgainstFloor);

        // Everything the growth phase keeps is allocated before the baseline: what the lab records stays off the heap it weighs.
        var checkpoints = plan.Checkpoints.ToArray();
        var figures = new CheckpointFigures[checkpoints.Length];
        var wall = new double[checkpoints.Length][];
        for (int c = 0; c < checkpoints.Length; c++) wall[c] = new double[c == checkpoints.Length - 1 ? FullCollections(context.Settings) : 1];
        var paused = new double[checkpoints.Length][];
        for (int c = 0; c < checkpoints.Length; c++) paused[c] = new double[wall[c].Length];
        // The first growth's blocks, for the longest insert that recurs (GrowthBlocks.Recurring), the floor's alike.
        bool growTwice = MapSubjects.GrownTwice.Contains(variant);
        if (timedAgainstFloor && !growTwice) throw new InvalidOperationException($"{variant}: a growth's floor is judged by the rule of the longest insert that recurs, so its map must grow twice.");
        int blockCount = GrowthBlocks.For(checkpoints);
        var firstBlocks = new GrowthBlocks(blockCount);
        var firstFloorBlocks = timedAgainstFloor ? new GrowthBlocks(blockCount) : null;
        var blocksAt = new int[checkpoints.Length];
        var floor = timedAgainstFloor ? new GrowthFloor(firstFloorBlocks) : null;
        var floors = new GrowthTrace[checkpoints.Length];
        TouchRuntimePathsOnce();

        long managedBefore = LiveAfterLastFullCollection();
        long committedBefore = GC.GetGCMemoryInfo().TotalCommittedBytes;
        long residentBefore = ResidentMemory.Current();
        bool peakReset = ResidentMemory.ResetPeak();

        MapSubject? subject = MapSubjects.Create(variant, plan.Entries);
        long grown = 0, allocated = 0;
        var worst = GrowthTrace.None(0);
        try
        {
            for (int c = 0; c < checkpoints.Length; c++)
            {
                context.Cancellation.ThrowIfCancellationRequested();
                var runtimeBefore = RuntimeActivity.Take();
                long before = GC.GetAllocatedBytesForCurrentThread();
                worst = GrowthTrace.Worst(worst, subject.Grow(grown, checkpoints[c], floor, firstBlocks));
                floors[c] = floor?.Trace ?? default;
                blocksAt[c] = firstBlocks.Count;
                allocated += GC.GetAllocatedBytesForCurrentThread() - before;
                var during = RuntimeActivity.Take() - runtimeBefore;
                grown = checkpoints[c];

                // Several timed collections at the run's size (its targets), one on the way (a chart's point). Each is a full
                // blocking compacting collection, so the heap is weighed as the last of them left it, without collecting again.
                LiveSetProbe.MeasureFullCollections(wall[c], paused[c]);

                long managed = LiveAfterLastFullCollection() - managedBefore;
                long committed = GC.GetGCMemoryInfo().TotalCommittedBytes - committedBefore;
                // The /proc reads after the weighing (the peak is a high-water mark: reading it later changes nothing), and
                // what they leave collected now, so none of it is on the heap the next checkpoint weighs.
                long resident = ResidentMemory.Current() - residentBefore;
                long peak = ResidentMemory.Peak() - residentBefore;
                GC.Collect(0);
                GC.WaitForPendingFinalizers();
                figures[c] = new CheckpointFigures(peak, worst, during, allocated, managed, committed, resident);
            }
        }
        finally
        {
            subject.Dispose();
        }
        subject = null; // a Dictionary's Dispose only clears it: its arrays go with the subject, before the second growth

        var second = growTwice ? GrowAgain(context, variant, checkpoints, firstBlocks, firstFloorBlocks) : null;

        if (!peakReset) context.Note("The peak resident set could not be reset here: peak memory counts everything since the child started.");
        for (int c = 0; c < checkpoints.Length; c++)
        {
            var repeat = second is null ? (RepeatFigures?)null : RepeatFigures.Of(firstBlocks, second.Inserts, blocksAt[c], Math.Min(second.Grown, checkpoints[c]));
            Record(context, variant, checkpoints[c], figures[c], repeat, wall[c], paused[c]);
            if (floor is not null)
            {
                var floorRepeat = RepeatFigures.Of(firstFloorBlocks!, second!.Floor!, blocksAt[c], Math.Min(second.Grown, checkpoints[c]));
                RecordFloor(context, variant, checkpoints[c], floors[c], floorRepeat with { BlockFirstIndex = -1 });
            }
        }
    }

    /// <summary>
    /// The second growth, which only the longest insert that recurs reads: a fresh map of the variant grown through the
    /// same checkpoints block by block (so its blocks cover the same key indexes as the first's), its floor beside it where
    /// the first had one, after a full collection has taken the first map's memory. Run once every other figure of the
    /// growth phase is taken, so it changes none of them. Only what can change the recurring figure is timed (see
    /// <see cref="GrowthBlocks"/>'s remarks): a block of inserts only where the first growth's block worst is above the
    /// recurring worst so far (or the floor beside it runs), a floor block likewise against the first floor's, and the
    /// growth stops once no block left, of the inserts or the floor, is above its recurring worst so far. The figure at
    /// every checkpoint is the one a second growth timing every block, its floor beside each, would give. Its blocks' arrays are allocated here, after the first
    /// growth's figures are taken.
    /// </summary>
    private static SecondGrowth GrowAgain(ExperimentContext context, string variant, long[] checkpoints, GrowthBlocks first, GrowthBlocks? firstFloor)
    {
        var blocks = GrowthBlocks.Against(first);
        var floorBlocks = firstFloor is null ? null : GrowthBlocks.Against(firstFloor);
        var floor = floorBlocks is null ? null : new GrowthFloor(floorBlocks);
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        GC.WaitForPendingFinalizers();
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        long grown = 0;
        using (var again = MapSubjects.Create(variant, checkpoints[^1]))
        {
            bool anyLeftMatters = true;
            foreach (long checkpoint in checkpoints)
            {
                context.Cancellation.ThrowIfCancellationRequested();
                while (grown < checkpoint && (anyLeftMatters = blocks.AnyCanMatterFrom(blocks.Count) || floorBlocks?.AnyCanMatterFrom(floorBlocks.Count) == true))
                {
                    long to = Math.Min(checkpoint, grown + GrowthTrace.BlockInserts); // the first growth's block boundaries
                    again.Grow(grown, to, floor, blocks);
                    grown = to;
                }
                if (!anyLeftMatters) break;
            }
        }
        while (blocks.Count < first.Count) blocks.Skip();
        while (floorBlocks is not null && floorBlocks.Count < firstFloor!.Count) floorBlocks.Skip();
        if (blocks.Count != first.Count || floorBlocks?.Count != firstFloor?.Count)
        {
            throw new InvalidOperationException($"{variant}: the second growth kept {blocks.Count} blocks, the first {first.Count}; they must cover the same key indexes.");
        }
        return new SecondGrowth(blocks, floorBlocks, grown);
    }

    /// <summary>What the second growth kept: its blocks, its floor's (or null), and the inserts it made before nothing left could matter.</summary>
    private sealed record SecondGrowth(GrowthBlocks Inserts, GrowthBlocks? Floor, long Grown);

    /// <summary>
    /// The longest insert (or floor operation) that recurs in both growths up to a checkpoint, which key index began its
    /// block (-1: not an insert), the second growth's own longest over the blocks it timed, the blocks it timed and the
    /// inserts it made by then.
    /// </summary>
    private readonly record struct RepeatFigures(RecurringWorst Recurring, long BlockFirstIndex, long SecondGrowthWorstTicks, int SecondTimedBlocks, long SecondGrowthInserts)
    {
        public static RepeatFigures Of(GrowthBlocks first, GrowthBlocks second, int blocks, long secondInserts)
        {
            var recurring = GrowthBlocks.Recurring(first.WorstTicks, second.WorstTicks, blocks);
            return new(recurring, recurring.Block < 0 ? -1 : first.IndexOf(recurring.Block), second.WorstOver(blocks), second.TimedOver(blocks), secondInserts);
        }
    }

    /// <summary>
    /// The growth's floor so far (<see cref="GrowthFloor"/>), recorded under the map it ran beside: its longest trivial
    /// operation by the same disturbance rule as the map's longest insert (<see cref="GrowthTrace"/>), with the blocks it
    /// judged and found disturbed beside it.
    /// </summary>
    private static void RecordFloor(ExperimentContext context, string variant, long entries, GrowthTrace floor, RepeatFigures repeat)
    {
        context.RecordSamples(variant, Unit.Milliseconds, [LabClock.Milliseconds(repeat.Recurring.Ticks)], Parameters.Of(("entries", entries), ("op", "longest-insert-floor")), metrics: new Dictionary<string, double>
        {
            ["longestOneGrowthMs"] = LabClock.Milliseconds(floor.WorstTicks),
            ["longestSecondGrowthMs"] = LabClock.Milliseconds(repeat.SecondGrowthWorstTicks),
            ["secondGrowthTimedBlocks"] = repeat.SecondTimedBlocks,
            ["recurringWorstBlock"] = repeat.Recurring.Block,
            ["longestDisturbancesIncludedMs"] = LabClock.Milliseconds(floor.AnyWorstTicks),
            ["timedBlocks"] = floor.Blocks,
            ["disturbedBlocks"] = floor.DisturbedBlocks,
            ["worstFromDisturbedBlock"] = floor.WorstFromDisturbed ? 1 : 0,
            ["worstOperationIndex"] = floor.WorstIndex,
        });
    }

    /// <summary>
    /// Runs once every runtime path the growth phase takes besides the map's own (the /proc reads, the GC's figures, a
    /// timed full collection, the thread's switch count), then collects until nothing is left to finalize: what those paths
    /// keep on first use (a cached delegate, an encoding, a file API's statics) is then in the baseline, not counted
    /// against the map's entries, and nothing they left behind is freed during the weighing.
    /// </summary>
    private static void TouchRuntimePathsOnce()
    {
        Span<double> scratch = stackalloc double[2];
        _ = ResidentMemory.Current();
        _ = ResidentMemory.Peak();
        _ = ResidentMemory.ResetPeak();
        _ = GC.GetGCMemoryInfo().TotalCommittedBytes;
        _ = LiveAfterLastFullCollection();
        _ = GC.GetAllocatedBytesForCurrentThread();
        _ = RuntimeActivity.Take() - RuntimeActivity.Take();
        LiveSetProbe.MeasureFullCollections(scratch[..1], scratch[1..]);
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        GC.WaitForPendingFinalizers();
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
    }

    /// <summary>
    /// The managed bytes live after the last full blocking collection, as that collection left them (its generations'
    /// sizes after it, less their free space). Unlike <see cref="GC.GetTotalMemory(bool)"/>, read after the fact, this is
    /// not moved by an allocation quantum another thread (the finalizer, a tier-1 compile) took since: two launches once
    /// differed by about 8.5 KB that way, both ways, a map's whole managed weight.
    /// </summary>
    private static long LiveAfterLastFullCollection()
    {
        var info = GC.GetGCMemoryInfo(GCKind.FullBlocking);
        long live = 0;
        foreach (var generation in info.GenerationInfo) live += generation.SizeAfterBytes - generation.FragmentationAfterBytes;
        return live;
    }

    /// <summary>What the growth phase read at one checkpoint (bytes are above the start of the growth).</summary>
    private readonly record struct CheckpointFigures(long PeakResident, GrowthTrace Worst, RuntimeActivity During, long Allocated, long Managed, long Committed, long Resident);

    private static void Record(ExperimentContext context, string variant, long entries, CheckpointFigures f, RepeatFigures? repeat, double[] wallMs, double[] pausedMs)
    {
        var p = Parameters.Of(("entries", entries));
        context.RecordSamples(variant, Unit.Bytes, [f.PeakResident], p.With("op", "peak-memory"));
        // What else ran while the map grew to this checkpoint, beside its slowest insert so far: a collection during that
        // insert, or the thread taken off its core, is the runtime's or the machine's stall, not the map's step.
        // The judged figure counts a block that lost time to something other than its own work (preemption, the host's
        // stolen time) only by its slowest insert's own-time lower bound (GrowthTrace's rule); the longest of all inserts'
        // wall time stays beside it, with the blocks judged and found disturbed. Where a target reads it (GrownTwice), the
        // figure is the longest insert that recurs in a second growth (GrowthBlocks.Recurring): a stall of the host that
        // the disturbance rule cannot see (the guest counts it as the thread's CPU time) hits one growth's block, rarely
        // the same block of both. The first growth's own longest stays beside it; the other metrics describe the first growth.
        var metrics = new Dictionary<string, double>
        {
            ["growths"] = repeat is null ? 1 : 2,
            ["longestInsertOneGrowthMs"] = LabClock.Milliseconds(f.Worst.WorstTicks),
            ["longestInsertDisturbancesIncludedMs"] = LabClock.Milliseconds(f.Worst.AnyWorstTicks),
            ["timedBlocks"] = f.Worst.Blocks,
            ["disturbedBlocks"] = f.Worst.DisturbedBlocks,
            ["worstFromDisturbedBlock"] = f.Worst.WorstFromDisturbed ? 1 : 0,
            ["worstInsertIndex"] = f.Worst.WorstIndex,
            ["worstInsertSawCollection"] = f.Worst.WorstSawCollection ? 1 : 0,
            ["collectionsWhileGrowing"] = f.During.Collections,
            ["gcPauseWhileGrowingMs"] = f.During.PauseMilliseconds,
            ["involuntarySwitchesWhileGrowing"] = f.During.InvoluntarySwitches,
        };
        long judged = f.Worst.WorstTicks;
        if (repeat is { } r)
        {
            judged = r.Recurring.Ticks;
            metrics["longestInsertSecondGrowthMs"] = LabClock.Milliseconds(r.SecondGrowthWorstTicks);
            metrics["secondGrowthTimedBlocks"] = r.SecondTimedBlocks;
            metrics["secondGrowthInserts"] = r.SecondGrowthInserts;
            metrics["recurringWorstBlock"] = r.Recurring.Block;
            metrics["recurringWorstBlockFirstInsert"] = r.BlockFirstIndex;
        }
        context.RecordSamples(variant, Unit.Milliseconds, [LabClock.Milliseconds(judged)], p.With("op", "longest-insert"), metrics: metrics);
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

    /// <summary>
    /// Brings the variant's insert path to tier 1 with its statics initialised, on a small map of its own grown in many short
    /// calls over two rounds (tier 0, instrumented, tier 1) and then freed: the measured growth must not time a first resize
    /// with its JIT, and the first use of the variant allocates nothing that is counted. With <paramref name="withFloor"/>,
    /// the growth's floor (<see cref="GrowthFloor"/>) runs beside it, so its loop is at tier 1 too.
    /// </summary>
    private static void BringToTierOne(ExperimentContext context, string variant, long entries, bool withFloor)
    {
        const int Calls = 40, Rounds = 2;
        long size = Math.Min(entries, 65_536);
        long step = Math.Max(1, size / (Calls * Rounds));
        using var small = MapSubjects.Create(variant, size);
        var floor = withFloor ? new GrowthFloor() : null;
        long at = 0;
        TierUp.Run(context, [() =>
        {
            if (at >= size) return;
            small.Grow(at, Math.Min(size, at + step), floor);
            at += step;
        }], rounds: Rounds, calls: Calls);
    }
}

/// <summary>What the runtime and the scheduler did on the calling thread's behalf: collections, their pauses, and the times the thread was taken off its core.</summary>
internal readonly record struct RuntimeActivity(int Collections, double PauseMilliseconds, long InvoluntarySwitches)
{
    /// <summary>The counts now (the switches are -1 where the system does not tell them).</summary>
    public static RuntimeActivity Take()
        => new(GC.CollectionCount(0), GC.GetTotalPauseDuration().TotalMilliseconds, LabNative.InvoluntarySwitchesOfCurrentThread());

    /// <summary>What happened between <paramref name="before"/> and <paramref name="after"/>.</summary>
    public static RuntimeActivity operator -(RuntimeActivity after, RuntimeActivity before)
        => new(after.Collections - before.Collections, after.PauseMilliseconds - before.PauseMilliseconds,
            after.InvoluntarySwitches < 0 || before.InvoluntarySwitches < 0 ? -1 : after.InvoluntarySwitches - before.InvoluntarySwitches);
}
