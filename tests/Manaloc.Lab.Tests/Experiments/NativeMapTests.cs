using System.Globalization;
using Manaloc.Lab.Experiments;
using Manaloc.Lab.Harness;
using Manaloc.Lab.Platform;

namespace Manaloc.Lab.Tests.Experiments;

/// <summary>The native-map experiment's logic that is not timing: its workload, its variants' correctness, its child protocol and its declared targets.</summary>
public sealed class NativeMapTests
{
    [Fact]
    public void Keys_are_distinct_and_not_sequential()
    {
        var keys = Enumerable.Range(0, 100_000).Select(i => NativeMapWorkload.Key(i)).ToArray();
        Assert.Equal(keys.Length, keys.Distinct().Count());
        Assert.True(keys.Zip(keys.Skip(1)).Count(p => Math.Abs(p.Second - p.First) == 1) < 5);
    }

    [Fact]
    public void The_uniform_stream_only_holds_inserted_keys()
    {
        var inserted = Enumerable.Range(0, 1000).Select(i => NativeMapWorkload.Key(i)).ToHashSet();
        var stream = NativeMapWorkload.Uniform(1000, 4096, seed: 1).Keys;
        Assert.All(stream, k => Assert.Contains(k, inserted));
        Assert.True(stream.Distinct().Count() > 900); // uniform: nearly every key drawn at least once
    }

    [Fact]
    public void The_zipf_stream_is_skewed_with_its_hot_keys_spread_over_the_insertion_order()
    {
        const int entries = 10_000;
        var indexOf = Enumerable.Range(0, entries).ToDictionary(i => NativeMapWorkload.Key(i), i => i);
        var zipf = NativeMapWorkload.Zipf(entries, 1 << 16, seed: 2);
        var stream = zipf.Keys;
        Assert.Equal(zipf.Indexes.Select(i => NativeMapWorkload.Key(i)), stream); // each key beside the index it was inserted at
        Assert.All(stream, k => Assert.True(indexOf.ContainsKey(k)));
        var hottest = stream.GroupBy(k => k).OrderByDescending(g => g.Count()).Take(10).ToArray();
        double share = hottest[0].Count() / (double)stream.Length;
        double expected = new ZipfSampler(entries, NativeMapWorkload.ZipfTheta).HottestShare;
        Assert.InRange(share, expected * 0.8, expected * 1.2);
        Assert.True(hottest.Sum(g => g.Count()) > stream.Length / 5); // ten keys of 10,000 take over a fifth of the lookups
        // The ten hottest keys were not inserted side by side (their insertion indexes are not one run).
        var indexes = hottest.Select(g => indexOf[g.Key]).Order().ToArray();
        Assert.True(indexes[^1] - indexes[0] > entries / 10);
    }

    [Theory]
    [InlineData(1L)]
    [InlineData(2L)]
    [InlineData(3L)]
    [InlineData(1000L)]
    public void Zipf_ranks_stay_in_range_and_rank_zero_is_the_most_frequent(long n)
    {
        var sampler = new ZipfSampler(n, 0.99);
        var random = new Random(5);
        var counts = new long[n];
        for (int i = 0; i < 20_000; i++) counts[sampler.Next(random.NextDouble())]++;
        Assert.Equal(counts.Max(), counts[0]);
        Assert.Equal(0, sampler.Next(0));
        Assert.InRange(sampler.Next(0.999999), 0, n - 1);
    }

    [Fact]
    public void A_stream_length_that_is_not_a_power_of_two_is_refused()
        => Assert.Contains("power of two", Assert.Throws<ArgumentOutOfRangeException>(() => NativeMapWorkload.Uniform(10, 1000, 1)).Message, StringComparison.Ordinal);

    public static TheoryData<string> Variants() => new(MapSubjects.Reported);

    [Theory]
    [MemberData(nameof(Variants))]
    public void Every_variant_finds_every_key_it_grew_to_and_survives_the_mix(string variant)
    {
        const long entries = 50_000;
        using var subject = MapSubjects.Create(variant, entries);
        Assert.True(subject.Grow(0, entries / 2).WorstTicks >= 0);
        subject.Grow(entries / 2, entries);
        var uniform = NativeMapWorkload.Uniform(entries, 1 << 14, seed: 1);
        long sum = subject.Lookups(0, uniform, 1 << 14);
        long direct = 0;
        var indexOf = new Dictionary<long, long>();
        for (long i = 0; i < entries; i++) indexOf[NativeMapWorkload.Key(i)] = i;
        foreach (long k in uniform.Keys) direct += NativeMapWorkload.ValueOf(indexOf[k]).A;
        Assert.Equal(direct, sum); // every lookup hit, and read the value stored with its key
        if (subject.ConcurrentWrites)
        {
            subject.Mix(0, uniform, 1 << 14);
            Parallel.For(0, 2, t => subject.Mix(t, uniform, 1 << 14));
            subject.Lookups(0, uniform, 1 << 14); // still every key, after updates from two threads
        }
        // A key already present is refused, not counted twice (FASTER's upsert cannot tell an insert from an overwrite).
        if (variant != MapSubjects.Faster) Assert.Throws<InvalidOperationException>(() => subject.Grow(0, 1));
    }

    [Fact]
    public void A_growth_trace_judges_undisturbed_inserts_by_their_wall_time_and_disturbed_ones_by_their_own_time_at_least()
    {
        // Block 1 lost 8 of its ticks (its 9-tick insert's own time is at least 1); block 2's 2-tick insert lost nothing.
        var disturbed = GrowthTrace.Block(9, 300, false, new BlockDisturbance(true, true, 8));
        var clean = GrowthTrace.Block(2, 700, false, new BlockDisturbance(true, false, 0));
        var both = GrowthTrace.Worst(GrowthTrace.Worst(GrowthTrace.None(0), disturbed), clean);
        Assert.Equal((2L, 700L, 9L, 2L, 1L, false), (both.WorstTicks, both.WorstIndex, both.AnyWorstTicks, both.Blocks, both.DisturbedBlocks, both.WorstFromDisturbed));

        // A disturbed block whose slowest step is longer than all it lost (a resize stalled by the host) is not dropped:
        // the step counts for what it must have cost the thread itself.
        var stalledResize = GrowthTrace.Block(20_000, 42, false, new BlockDisturbance(true, true, 4_000));
        var withResize = GrowthTrace.Worst(both, stalledResize);
        Assert.Equal((16_000L, 42L, 20_000L, 3L, 2L, true), (withResize.WorstTicks, withResize.WorstIndex, withResize.AnyWorstTicks, withResize.Blocks, withResize.DisturbedBlocks, withResize.WorstFromDisturbed));

        // Where the system tells nothing, nothing is left out and the count says so.
        var unknown = GrowthTrace.Worst(both, GrowthTrace.Block(30, 5, false, BlockDisturbance.Unknown));
        Assert.Equal((30L, -1L), (unknown.WorstTicks, unknown.DisturbedBlocks));
    }

    [Fact]
    public void A_growth_counts_its_blocks_and_judges_an_insert_it_timed()
    {
        using var subject = MapSubjects.Create(MapSubjects.Native, 10_000);
        var trace = subject.Grow(0, 10_000);
        Assert.Equal((10_000 + GrowthTrace.BlockInserts - 1) / GrowthTrace.BlockInserts, trace.Blocks);
        Assert.True(trace.AnyWorstTicks > 0 && trace.WorstTicks >= 0 && trace.WorstTicks <= trace.AnyWorstTicks);
        if (!OperatingSystem.IsLinux()) return;
        Assert.InRange(trace.DisturbedBlocks, 0, trace.Blocks);
        // The system call the blocks read agrees with the kernel's own report of the thread's involuntary switches.
        long viaSystemCall = LabNative.InvoluntarySwitchesOfCurrentThread();
        const string Field = "nonvoluntary_ctxt_switches:";
        long viaProc = long.Parse(File.ReadLines("/proc/thread-self/status").Single(l => l.StartsWith(Field, StringComparison.Ordinal))[Field.Length..].Trim(), CultureInfo.InvariantCulture);
        Assert.True(viaSystemCall >= 0);
        Assert.InRange(viaProc - viaSystemCall, 0, 3);
    }

    [Fact]
    public void A_growth_with_its_floor_times_a_floor_block_after_every_insert_block_for_as_long_as_the_inserts_took()
    {
        using var subject = MapSubjects.Create(MapSubjects.ConcurrentNative, 10_000);
        var floor = new GrowthFloor();
        var trace = subject.Grow(0, 10_000, floor);
        Assert.Equal(trace.Blocks, floor.Trace.Blocks); // one floor block per insert block
        // Each floor block runs at least one operation and keeps going until its block of inserts' time has passed: with
        // operations far cheaper than an insert, many more of them.
        Assert.True(floor.Operations > trace.Blocks, $"{floor.Operations} floor operations over {trace.Blocks} blocks");
        Assert.True(floor.Trace.AnyWorstTicks > 0 && floor.Trace.WorstTicks <= floor.Trace.AnyWorstTicks);
        Assert.InRange(floor.Trace.WorstIndex, 0, floor.Operations - 1);
        if (OperatingSystem.IsLinux()) Assert.InRange(floor.Trace.DisturbedBlocks, 0, floor.Trace.Blocks);
        // The lookups' floor is not timed while it grows, so it has no insert to set a floor beside.
        using var array = MapSubjects.Create(MapSubjects.Floor, 10);
        Assert.Throws<NotSupportedException>(() => array.Grow(0, 10, new GrowthFloor()));
    }

    [Fact]
    public void The_recurring_longest_insert_takes_per_block_the_lesser_of_two_growths_and_the_largest_of_those()
    {
        // Block 1: a stall in the first growth only. Block 3: a cost in both (a resize), 40 and 45. Block 5: a stall in
        // the second growth only, longer than the resize.
        long[] first = [2, 900, 3, 40, 2, 3, 2];
        long[] second = [3, 2, 2, 45, 3, 5_000, 2];
        var all = GrowthBlocks.Recurring(first, second, first.Length);
        Assert.Equal(new RecurringWorst(40, 3), all);
        // At a checkpoint before the resize's block, only the blocks up to it: the stall of block 1 still does not count
        // (each of blocks 0 to 2 recurs at 2; the first of them is named).
        Assert.Equal(new RecurringWorst(2, 0), GrowthBlocks.Recurring(first, second, 3));
        Assert.Equal(new RecurringWorst(45, 3), GrowthBlocks.Recurring(first.Select(t => t == 40 ? 50L : t).ToArray(), second, 4)); // the lesser of the two
        Assert.Equal(new RecurringWorst(0, -1), GrowthBlocks.Recurring(first, second, 0));
        // A stall that hit the same block of both growths counts, by the shorter of the two.
        Assert.Equal(new RecurringWorst(700, 6), GrowthBlocks.Recurring(first[..6].Append(800).ToArray(), second[..6].Append(700).ToArray(), 7));
        Assert.Throws<ArgumentOutOfRangeException>(() => GrowthBlocks.Recurring(first, second[..4], 5));
    }

    [Fact]
    public void Growth_blocks_start_at_every_checkpoint_and_refuse_more_blocks_than_sized_for()
    {
        Assert.Equal(0, GrowthBlocks.For([]));
        Assert.Equal(4 + 4 + 8, GrowthBlocks.For([1_000, 2_000, 4_000])); // 1,000 inserts: three whole blocks and a short one
        Assert.Equal(1, GrowthBlocks.For([0, 0, 1]));
        Assert.Throws<ArgumentException>(() => GrowthBlocks.For([10, 5]));
        var blocks = new GrowthBlocks(2);
        blocks.Add(7, 0);
        blocks.Add(9, 256);
        Assert.Equal([7L, 9L], blocks.WorstTicks.ToArray());
        Assert.Equal((9L, 7L, 256L), (blocks.WorstOver(2), blocks.WorstOver(1), blocks.IndexOf(1)));
        Assert.Throws<InvalidOperationException>(() => blocks.Add(1, 512));
    }

    [Fact]
    public void Two_growths_through_the_same_checkpoints_keep_blocks_of_the_same_key_indexes_with_their_floor_s_alongside()
    {
        long[] checkpoints = [1_000, 2_000, 4_000];
        int count = GrowthBlocks.For(checkpoints);
        var runs = new (GrowthBlocks Inserts, GrowthBlocks Floor, GrowthTrace Trace)[2];
        for (int run = 0; run < runs.Length; run++)
        {
            var inserts = new GrowthBlocks(count);
            var floorBlocks = new GrowthBlocks(count);
            var floor = new GrowthFloor(floorBlocks);
            using var subject = MapSubjects.Create(MapSubjects.Native, checkpoints[^1]);
            long grown = 0;
            var trace = GrowthTrace.None(0);
            foreach (long checkpoint in checkpoints)
            {
                trace = GrowthTrace.Worst(trace, subject.Grow(grown, checkpoint, floor, inserts));
                grown = checkpoint;
            }
            runs[run] = (inserts, floorBlocks, trace);
        }
        Assert.All(runs, r => Assert.Equal((count, count), (r.Inserts.Count, r.Floor.Count)));
        long[] starts = [.. Enumerable.Range(0, count).Select(runs[0].Inserts.IndexOf)];
        Assert.Equal(starts, Enumerable.Range(0, count).Select(runs[1].Inserts.IndexOf));
        Assert.Equal([0L, 256L, 512L, 768L, 1_000L], starts[..5]); // a new block at the checkpoint
        // Each growth's blocks hold its judged figure: the largest of them is the growth's own longest insert.
        Assert.All(runs, r => Assert.Equal(r.Trace.WorstTicks, r.Inserts.WorstOver(count)));
        using var array = MapSubjects.Create(MapSubjects.Floor, 10);
        Assert.Throws<NotSupportedException>(() => array.Grow(0, 10, null, new GrowthBlocks(1))); // it is not timed while it grows
    }

    [Fact]
    public void The_maps_a_longest_insert_target_reads_grow_twice_with_Dictionary_their_reference_and_the_others_once()
    {
        var read = new NativeMap().Targets.Where(t => t.Metric.Name.Contains("longest insert that recurs", StringComparison.Ordinal))
            .Select(t => t.Metric.Name[..t.Metric.Name.IndexOf(':', StringComparison.Ordinal)]).ToArray();
        Assert.Equal([MapSubjects.Native, MapSubjects.ConcurrentNative], read);
        Assert.Equal([MapSubjects.Dictionary, .. read], MapSubjects.GrownTwice);
        Assert.All(MapSubjects.TimedAgainstFloor, v => Assert.Contains(v, MapSubjects.GrownTwice)); // a floor is judged by the same rule
    }

    [Fact]
    public void A_second_growth_set_against_the_first_skips_only_blocks_that_cannot_change_the_recurring_figure()
    {
        var first = new GrowthBlocks(4);
        foreach (long ticks in new long[] { 5, 1, 9, 2 }) first.Add(ticks, 0);
        var second = GrowthBlocks.Against(first);
        Assert.True(second.CanMatter(0)); // nothing recurs yet: every block with a first-growth worst above 0 counts
        Assert.Contains("must be timed", Assert.Throws<InvalidOperationException>(second.Skip).Message, StringComparison.Ordinal);
        second.Add(3, 0);
        Assert.Equal(3, second.RecurringSoFar); // the lesser of 5 and 3
        Assert.False(second.CanMatter(1)); // its first-growth worst, 1, is below what recurs already
        second.Skip();
        Assert.Equal((1, -1L, 0L), (second.Skipped, second.IndexOf(1), second.WorstTicks[1]));
        Assert.True(second.AnyCanMatterFrom(2) && second.CanMatter(2));
        second.Add(20, 512);
        Assert.Equal(9, second.RecurringSoFar);
        Assert.False(second.AnyCanMatterFrom(3)); // block 3's first worst, 2, is below 9: the growth may stop here
        second.Skip();
        Assert.Equal((4, 2), (second.Count, second.TimedOver(4)));
        Assert.Equal(new RecurringWorst(9, 2), GrowthBlocks.Recurring(first.WorstTicks, second.WorstTicks, 4));
        Assert.Throws<InvalidOperationException>(second.Skip); // no room left
        // A first growth's blocks are what the second is judged against: none is left untimed.
        Assert.Throws<InvalidOperationException>(new GrowthBlocks(2).Skip);
        Assert.True(new GrowthBlocks(2).CanMatter(0));
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public void A_second_growth_that_skips_and_stops_where_nothing_can_matter_gets_at_every_checkpoint_the_figure_of_a_full_one(int seed)
    {
        // Synthetic traces: a cost of the map's own at fixed blocks in both growths, and stalls of the host at random
        // blocks of either, some of them late (the growth cannot stop before the last block that could matter).
        const int Blocks = 4_000;
        var random = new Random(seed);
        long[] Trace()
        {
            var t = new long[Blocks];
            for (int b = 0; b < Blocks; b++) t[b] = 20 + random.Next(30);
            foreach (int step in new[] { 900, 1_800, 3_600 }) t[step] = 400 + random.Next(50);
            for (int stall = 0; stall < 6; stall++) t[random.Next(Blocks)] = 5_000 + random.Next(20_000);
            return t;
        }
        long[] firstTrace = Trace(), fullSecond = Trace();
        var first = new GrowthBlocks(Blocks);
        foreach (long ticks in firstTrace) first.Add(ticks, 0);
        var second = GrowthBlocks.Against(first);
        int stoppedAt = Blocks;
        for (int b = 0; b < Blocks; b++)
        {
            if (!second.AnyCanMatterFrom(b))
            {
                stoppedAt = b;
                break;
            }
            if (second.CanMatter(b)) second.Add(fullSecond[b], b);
            else second.Skip();
        }
        while (second.Count < Blocks) second.Skip();
        Assert.True(second.Skipped > Blocks / 2, $"{second.Skipped} blocks skipped"); // most blocks cannot matter once a step recurs
        foreach (int checkpoint in new[] { 1, 500, 1_000, 2_000, stoppedAt, Blocks })
        {
            Assert.Equal(GrowthBlocks.Recurring(firstTrace, fullSecond, checkpoint).Ticks, GrowthBlocks.Recurring(first.WorstTicks, second.WorstTicks, checkpoint).Ticks);
        }
        Assert.InRange(GrowthBlocks.Recurring(first.WorstTicks, second.WorstTicks, Blocks).Ticks, 400, 449); // a step of the map's own, no stall
    }

    [Fact]
    public void A_second_growth_inserts_every_key_but_times_only_the_blocks_that_can_matter_and_its_floor_only_beside_those_of_its_own()
    {
        const long Entries = 1_000; // four blocks: 0, 256, 512, 768
        var first = new GrowthBlocks(4);
        var firstFloor = new GrowthBlocks(4);
        foreach (long ticks in new long[] { 0, 0, long.MaxValue, 0 }) first.Add(ticks, 0); // only block 2 can matter
        foreach (long ticks in new long[] { 0, long.MaxValue, 0, 0 }) firstFloor.Add(ticks, 0); // only the floor's block 1
        var second = GrowthBlocks.Against(first);
        var secondFloor = GrowthBlocks.Against(firstFloor);
        var floor = new GrowthFloor(secondFloor);
        using var subject = MapSubjects.Create(MapSubjects.Native, Entries);
        subject.Grow(0, Entries, floor, second);
        // Block 1 is timed for its floor's sake (the floor runs as long as the inserts took), block 2 for its own.
        Assert.Equal([-1L, 256L, 512L, -1L], Enumerable.Range(0, 4).Select(second.IndexOf));
        Assert.Equal((4, 3), (secondFloor.Count, secondFloor.Skipped));
        Assert.True(secondFloor.IndexOf(1) >= 0 && floor.Operations > 0);
        var uniform = NativeMapWorkload.Uniform(Entries, 1 << 12, seed: 4);
        long direct = 0;
        var indexOf = new Dictionary<long, long>();
        for (long i = 0; i < Entries; i++) indexOf[NativeMapWorkload.Key(i)] = i;
        foreach (long k in uniform.Keys) direct += NativeMapWorkload.ValueOf(indexOf[k]).A;
        Assert.Equal(direct, subject.Lookups(0, uniform, 1 << 12)); // the untimed blocks inserted their keys and values too
    }

    [Fact]
    public void A_floor_block_runs_one_operation_even_when_no_time_is_left()
    {
        var floor = new GrowthFloor();
        floor.RunBlock(0);
        floor.RunBlock(-5);
        Assert.Equal(2, floor.Operations);
        Assert.Equal(2, floor.Trace.Blocks);
    }

    [Fact]
    public void After_a_disturbed_block_of_inserts_the_floor_runs_as_long_as_the_undisturbed_blocks_on_average()
    {
        var floor = new GrowthFloor();
        Assert.Equal(900, floor.TicksBeside(900, disturbed: true)); // no undisturbed block yet: the block's own time
        Assert.Equal(100, floor.TicksBeside(100, disturbed: false));
        Assert.Equal(300, floor.TicksBeside(300, disturbed: false));
        Assert.Equal(200, floor.TicksBeside(50_000, disturbed: true)); // not the time the thread lost
        Assert.Equal(200, floor.TicksBeside(200, disturbed: false));
    }

    [Fact]
    public void A_disturbed_block_keeps_its_slowest_operation_whole_only_as_the_slowest_of_all()
    {
        var clean = GrowthTrace.Block(5, 10, true, new BlockDisturbance(true, false, 3));
        Assert.Equal((5L, 10L, true, 5L, 1L, 0L, false), (clean.WorstTicks, clean.WorstIndex, clean.WorstSawCollection, clean.AnyWorstTicks, clean.Blocks, clean.DisturbedBlocks, clean.WorstFromDisturbed));
        // Lost more than its slowest operation took: that operation was the stall, and counts for nothing.
        var stalled = GrowthTrace.Block(50, 11, false, new BlockDisturbance(true, true, 60));
        Assert.Equal((0L, 50L, 1L, true), (stalled.WorstTicks, stalled.AnyWorstTicks, stalled.DisturbedBlocks, stalled.WorstFromDisturbed));
        var unknown = GrowthTrace.Block(7, 12, false, BlockDisturbance.Unknown);
        Assert.Equal((7L, -1L), (unknown.WorstTicks, unknown.DisturbedBlocks));
    }

    [Fact]
    public void A_child_of_a_judged_map_records_its_growth_s_floor_at_every_checkpoint()
    {
        var plan = new NativeMapPlan(MapSubjects.Native, 8_000);
        var output = ChildProcess.Run(["child", "native-map", "run", "--mode", "smoke", "--", .. plan.ToArguments()], null, TimeSpan.FromMinutes(2));
        var floors = output.Measurements.Where(m => m.Parameters.Is("op", "longest-insert-floor")).ToArray();
        Assert.Equal([2_000L, 4_000L, 8_000L], floors.Select(m => m.Parameters.Long("entries")).Order());
        Assert.All(floors, m => Assert.Equal(MapSubjects.Native, m.Variant));
        var full = floors.Single(m => m.Parameters.Is("entries", 8_000));
        Assert.True(full.Statistics.Median > 0 && full.Statistics.Median <= Math.Min(full.Metrics["longestOneGrowthMs"], full.Metrics["longestSecondGrowthMs"]));
        Assert.True(full.Metrics["longestOneGrowthMs"] <= full.Metrics["longestDisturbancesIncludedMs"]);
        var inserts = output.Measurements.Single(m => m.Parameters.Is("op", "longest-insert") && m.Parameters.Is("entries", 8_000));
        Assert.Equal(inserts.Metrics["timedBlocks"], full.Metrics["timedBlocks"]);
        // A judged map grows twice; its figure recurs in both, and the second growth timed at least one block of each.
        Assert.Equal(2, inserts.Metrics["growths"]);
        Assert.True(inserts.Statistics.Median <= Math.Min(inserts.Metrics["longestInsertOneGrowthMs"], inserts.Metrics["longestInsertSecondGrowthMs"]));
        Assert.InRange(inserts.Metrics["secondGrowthTimedBlocks"], 1, inserts.Metrics["timedBlocks"]);
        Assert.InRange(full.Metrics["secondGrowthTimedBlocks"], 1, full.Metrics["timedBlocks"]);
        Assert.InRange(inserts.Metrics["secondGrowthInserts"], 1, 8_000);
        // The report says how many blocks each side judged by their own-time bound.
        Assert.InRange(inserts.Metrics["disturbedBlocks"], 0, inserts.Metrics["timedBlocks"]);
        Assert.InRange(full.Metrics["disturbedBlocks"], 0, full.Metrics["timedBlocks"]);
    }

    [Theory]
    [MemberData(nameof(Variants))]
    public void An_untimed_fill_holds_every_key_with_its_value_and_refuses_a_second_fill(string variant)
    {
        const long entries = 20_000;
        using var subject = MapSubjects.Create(variant, entries);
        subject.Fill(entries);
        var uniform = NativeMapWorkload.Uniform(entries, 1 << 13, seed: 3);
        long direct = 0;
        var indexOf = new Dictionary<long, long>();
        for (long i = 0; i < entries; i++) indexOf[NativeMapWorkload.Key(i)] = i;
        foreach (long k in uniform.Keys) direct += NativeMapWorkload.ValueOf(indexOf[k]).A;
        Assert.Equal(direct, subject.Lookups(0, uniform, 1 << 13)); // every lookup hit, with the value the growth would store
        // The same keys again are refused (the floor: it holds them all already), not counted twice.
        if (variant != MapSubjects.Faster) Assert.Throws<InvalidOperationException>(() => subject.Fill(entries));
    }

    [Fact]
    public void Quick_mode_measures_the_lookups_in_its_last_launch_and_the_others_in_every_launch()
    {
        var quick = new NativeMap().SettingsFor(RunSettings.Quick());
        Assert.Equal(2, quick.Launches); // the Manaloc maps grow in both launches, the lookups run in the second
        Assert.Equal(1, NativeMapLookups.Launches(quick));
        Assert.Equal([false, true], Enumerable.Range(0, 2).Select(l => NativeMapLookups.RunsIn(quick with { Launch = l })));
        var three = RunSettings.Quick() with { LaunchesGiven = true };
        Assert.Equal([false, false, true], Enumerable.Range(0, 3).Select(l => NativeMapLookups.RunsIn(three with { Launch = l })));
        var full = RunSettings.Full();
        Assert.Equal(full.Launches, NativeMapLookups.Launches(full));
        Assert.All(Enumerable.Range(0, full.Launches), l => Assert.True(NativeMapLookups.RunsIn(full with { Launch = l })));
        Assert.True(NativeMapLookups.RunsIn(RunSettings.Smoke()));
    }

    [Theory]
    [MemberData(nameof(Variants))]
    public void A_lookup_of_a_key_never_inserted_fails_the_run(string variant)
    {
        using var subject = MapSubjects.Create(variant, 1000);
        subject.Grow(0, 1000);
        var missing = new LookupStream([.. Enumerable.Range(5_000, 16)]);
        var e = Assert.Throws<InvalidOperationException>(() => subject.Lookups(0, missing, 16));
        Assert.Contains(variant, e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_plan_round_trips_through_the_child_arguments_and_a_bad_one_is_refused()
    {
        var plan = new NativeMapPlan(MapSubjects.Faster, 1_000_000);
        Assert.Equal(plan, NativeMapPlan.Parse(plan.ToArguments()));
        Assert.Equal([250_000L, 500_000L, 1_000_000L], plan.Checkpoints);
        Assert.Contains("'nope'", Assert.Throws<ArgumentException>(() => NativeMapPlan.Parse(["nope", "10"])).Message, StringComparison.Ordinal);
        Assert.Contains("'3'", Assert.Throws<ArgumentException>(() => NativeMapPlan.Parse([MapSubjects.Dictionary, "3"])).Message, StringComparison.Ordinal);
        Assert.Contains("2 arguments", Assert.Throws<ArgumentException>(() => NativeMapPlan.Parse([MapSubjects.Dictionary])).Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_child_grows_and_weighs_its_variant_and_traces_its_slowest_insert()
    {
        var plan = new NativeMapPlan(MapSubjects.Concurrent, 8_000);
        var output = ChildProcess.Run(["child", "native-map", "run", "--mode", "smoke", "--", .. plan.ToArguments()], null, TimeSpan.FromMinutes(2));
        var ops = output.Measurements.Select(m => m.Parameters.Text("op")).ToHashSet();
        Assert.Equal(["full-gc", "insert-allocation", "longest-insert", "managed-bytes", "native-bytes", "peak-memory"], ops.Order(StringComparer.Ordinal)); // no target reads its growth's floor
        Assert.Equal([2_000L, 4_000L, 8_000L], output.Measurements.Where(m => m.Parameters.Is("op", "full-gc")).Select(m => m.Parameters.Long("entries")).Order());
        // ConcurrentDictionary holds a node object per entry: its managed weight is tens of bytes per entry.
        var managed = Assert.Single(output.Measurements, m => m.Parameters.Is("op", "managed-bytes") && m.Parameters.Is("entries", 8_000));
        Assert.True(managed.Statistics.Median > 32, $"{managed.Statistics.Median} B/entry");
        var allocation = Assert.Single(output.Measurements, m => m.Parameters.Is("op", "insert-allocation") && m.Parameters.Is("entries", 8_000));
        Assert.True(allocation.Statistics.Median > 32, $"{allocation.Statistics.Median} B/insert"); // a node per insert
        var longest = Assert.Single(output.Measurements, m => m.Parameters.Is("op", "longest-insert") && m.Parameters.Is("entries", 8_000));
        Assert.InRange(longest.Metrics["worstInsertIndex"], 0, 7_999);
        // No target reads ConcurrentDictionary's longest insert: it grows once, and its figure is that growth's longest.
        Assert.Equal(1, longest.Metrics["growths"]);
        Assert.Equal(longest.Metrics["longestInsertOneGrowthMs"], longest.Statistics.Median);
        Assert.False(longest.Metrics.ContainsKey("longestInsertSecondGrowthMs"));
        Assert.True(longest.Metrics["collectionsWhileGrowing"] >= 0);
    }

    [Fact]
    public void The_lookups_measure_every_map_and_the_floor_side_by_side()
    {
        var settings = RunSettings.Smoke();
        var context = new ExperimentContext("native-map", settings);
        NativeMapLookups.Run(context, 4_000);
        var byOp = context.Measurements.ToLookup(m => (m.Parameters.Text("op"), m.Threads));
        Assert.Equal(MapSubjects.Reported, byOp[("lookup-uniform", 1)].Select(m => m.Variant));
        Assert.Equal(MapSubjects.Reported, byOp[("lookup-zipf", 2)].Select(m => m.Variant));
        Assert.Equal([MapSubjects.Concurrent, MapSubjects.Faster, MapSubjects.ConcurrentNative], byOp[("mix", 2)].Select(m => m.Variant));
        Assert.Equal([MapSubjects.Concurrent, MapSubjects.Faster, MapSubjects.ConcurrentNative], byOp[("mix", 1)].Select(m => m.Variant));
        Assert.All(context.Measurements, m => Assert.Equal(settings.PerLaunch(2), m.Statistics.Count)); // one sample a round
        // No lookup allocates: a per-operation allocation is at least one object (24 bytes or more) an operation. Below one
        // byte an operation is the runtime's one-off work on the thread (a smoke run samples before the loops reach their
        // last tier, and a CI run's loaded machine once showed a few bytes over a sample's thousands of lookups).
        Assert.All(byOp[("lookup-uniform", 1)], m => Assert.InRange(m.AllocatedBytesPerOp!.Value, 0, 1));
    }

    [Fact]
    public void Every_target_reads_its_figure_at_the_largest_entry_count()
    {
        Measurement M(string variant, string op, long entries, double value, int threads = 1) => new()
        {
            Variant = variant,
            Parameters = Parameters.Of(("entries", entries), ("op", op)).With("threads", threads),
            Unit = Unit.Milliseconds,
            Threads = threads,
            Statistics = Statistics.From([value]),
        };
        var measurements = new[]
        {
            M(MapSubjects.Concurrent, "full-gc", 10, 100), M(MapSubjects.Concurrent, "full-gc", 40, 400),
            M(MapSubjects.ConcurrentNative, "full-gc", 10, 1), M(MapSubjects.ConcurrentNative, "full-gc", 40, 4),
        };
        var target = new NativeMap().Targets.Single(t => t.Metric.Name.StartsWith("ConcurrentNativeMap: full GC pause", StringComparison.Ordinal));
        Assert.Equal(0.01, target.Metric.Compute(new Figures(measurements, random: null))!.Value, 9);
        Assert.Equal(100, new NativeMap().Claim!.Today.Compute(new Figures(measurements, random: null))!.Value, 9);
    }

    [Theory]
    [InlineData(1.0, 1.02, true)]   // the map's longest insert 1.02x the floor's longest operation: the machine's, at the floor
    [InlineData(1.0, 1.5, false)]   // 1.5x: a slow step of the map's own, a miss
    public void The_longest_insert_target_keeps_its_ratio_to_Dictionary_and_reads_at_the_floor_only_within_it(double floorMs, double mapMs, bool atFloor)
    {
        Measurement M(string variant, string op, double ms) => new()
        {
            Variant = variant,
            Parameters = Parameters.Of(("entries", 1000L), ("op", op)),
            Unit = Unit.Milliseconds,
            // Two launches of three samples each, spread by ±1%.
            Statistics = Statistics.From([ms * 0.99, ms, ms * 1.01, ms * 0.99, ms, ms * 1.01]),
            Launches = [new LaunchFigures(0, 3, ms), new LaunchFigures(1, 3, ms)],
        };
        var measurements = new[] { M(MapSubjects.Dictionary, "longest-insert", 20), M(MapSubjects.Native, "longest-insert", mapMs), M(MapSubjects.Native, "longest-insert-floor", floorMs) };
        var target = new NativeMap().Targets.Single(t => t.Metric.Name.StartsWith("NativeMap: longest insert that recurs", StringComparison.Ordinal));
        Assert.Equal(Comparator.AtMost, target.Floor!.Comparator);
        var result = Judgement.Judge(null, [target], measurements, seed: 1).Targets.Single();
        Assert.Equal(mapMs / 20, result.Today!.Value, 6); // the ratio against Dictionary stays the figure (goal 0.01x: missed here)
        Assert.Equal(mapMs / floorMs, result.Floor!.Today!.Value, 6);
        Assert.Equal(atFloor, result.AtFloor);
        Assert.Equal(atFloor ? "at the floor" : "NOT met", result.MetWord());
    }
}
