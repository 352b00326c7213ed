using System.Text;
using Manaloc.Lab.Experiments;
using Manaloc.Lab.Harness;
using Manaloc.Lab.Tests.Harness;

namespace Manaloc.Lab.Tests.Experiments;

/// <summary>The native-cache experiment's logic that is not timing: its workload, its variants' behaviour, its traces, its child protocol and its declared targets.</summary>
public sealed class NativeCacheTests
{
    [Fact]
    public void Keys_are_distinct_ascii_and_within_their_length_range()
    {
        var keys = Enumerable.Range(0, 100_000).Select(i => NativeCacheWorkload.KeyString(i)).ToArray();
        Assert.Equal(keys.Length, keys.Distinct(StringComparer.Ordinal).Count());
        Assert.All(keys, k => Assert.InRange(k.Length, NativeCacheWorkload.MinKeyChars, NativeCacheWorkload.MaxKeyChars));
        Assert.All(keys, k => Assert.True(k.All(char.IsAscii)));
        // Lengths spread over the whole range, with the mean the budgets assume.
        Assert.Equal(NativeCacheWorkload.MinKeyChars, keys.Min(k => k.Length));
        Assert.Equal(NativeCacheWorkload.MaxKeyChars, keys.Max(k => k.Length));
        Assert.InRange(keys.Average(k => k.Length), 31, 33);
        Assert.Equal(keys[12_345], NativeCacheWorkload.KeyString(12_345)); // reproducible from the index
    }

    [Fact]
    public void A_key_of_the_largest_full_mode_index_fits_its_length()
    {
        Span<char> key = stackalloc char[NativeCacheWorkload.MaxKeyChars];
        for (long i = 9_999_990; i < 10_000_000; i++) Assert.Equal(NativeCacheWorkload.KeyLength(i), NativeCacheWorkload.FormatKey(i, key));
    }

    [Fact]
    public void Values_and_rewrites_are_within_their_length_range()
    {
        var lengths = Enumerable.Range(0, 100_000).Select(i => NativeCacheWorkload.ValueLength(i)).ToArray();
        Assert.Equal(NativeCacheWorkload.MinValueBytes, lengths.Min());
        Assert.Equal(NativeCacheWorkload.MaxValueBytes, lengths.Max());
        Assert.InRange(lengths.Average(), 280, 296);
        Assert.All(Enumerable.Range(0, 10_000), at => Assert.InRange(NativeCacheWorkload.RewriteLength(at), NativeCacheWorkload.MinValueBytes, NativeCacheWorkload.MaxValueBytes));
        Assert.Equal(NativeCacheWorkload.ValueLength(7), NativeCacheWorkload.Value(7).Length);
    }

    [Fact]
    public void The_zipf_stream_stays_in_range_and_is_skewed()
    {
        var stream = NativeCacheWorkload.Zipf(10_000, 1 << 16, seed: 2);
        Assert.All(stream, i => Assert.InRange(i, 0, 9_999));
        int hottest = stream.GroupBy(i => i).Max(g => g.Count());
        double expected = new ZipfSampler(10_000, NativeCacheWorkload.ZipfTheta).HottestShare * stream.Length;
        Assert.InRange(hottest, expected * 0.8, expected * 1.2);
        Assert.Contains("power of two", Assert.Throws<ArgumentOutOfRangeException>(() => NativeCacheWorkload.Zipf(10, 1000, 1)).Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Request_keys_are_the_streams_keys_in_order_each_a_string_of_its_own_with_its_utf8_bytes()
    {
        var stream = NativeCacheWorkload.Zipf(5_000, 1 << 14, seed: 2);
        foreach (var runHalves in new Action<Action<int>>?[] { null, halves => LabThreads.RunTogether(2, halves) })
        {
            var requests = RequestKeys.Materialize(stream, runHalves);
            Assert.Equal(stream.Length, requests.Length);
            var seen = new HashSet<string>(ReferenceEqualityComparer.Instance);
            for (int at = 0; at < stream.Length; at++)
            {
                string key = requests.Key(at);
                Assert.Equal(stream[at], requests.Index(at));
                Assert.Equal(NativeCacheWorkload.KeyString(stream[at]), key);
                Assert.Equal(Encoding.UTF8.GetBytes(key), requests.Utf8(at).ToArray());
                Assert.True(seen.Add(key)); // a fresh instance per position, even where the stream repeats a key
            }
            Assert.True(stream.Distinct().Count() < stream.Length / 2); // the stream does repeat its hot keys
        }
        Assert.Throws<ArgumentOutOfRangeException>(() => RequestKeys.Materialize([]));
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Request_keys_of_one_form_build_it_for_every_position_and_refuse_the_other(bool strings)
    {
        var form = strings ? KeyForms.Strings : KeyForms.Utf8;
        var stream = NativeCacheWorkload.Zipf(5_000, 1 << 12, seed: 2);
        foreach (var runHalves in new Action<Action<int>>?[] { null, halves => LabThreads.RunTogether(2, halves) })
        {
            var requests = RequestKeys.Materialize(stream, runHalves, form);
            Assert.Equal(form, requests.Forms);
            var seen = new HashSet<string>(ReferenceEqualityComparer.Instance);
            for (int at = 0; at < stream.Length; at++)
            {
                Assert.Equal(stream[at], requests.Index(at));
                string expected = NativeCacheWorkload.KeyString(stream[at]);
                if (form == KeyForms.Strings)
                {
                    Assert.Equal(expected, requests.Key(at)); // both halves of the positions built
                    Assert.True(seen.Add(requests.Key(at)));
                }
                else
                {
                    Assert.Equal(Encoding.UTF8.GetBytes(expected), requests.Utf8(at).ToArray());
                }
            }
            requests.Require(form);
            var other = form == KeyForms.Strings ? KeyForms.Utf8 : KeyForms.Strings;
            Assert.Contains(other.ToString(), Assert.Throws<InvalidOperationException>(() => requests.Require(other)).Message, StringComparison.Ordinal);
            Assert.Equal(form == KeyForms.Utf8, requests.AllInGeneration(GC.MaxGeneration + 1)); // no strings: none young
        }
        Assert.Throws<ArgumentOutOfRangeException>(() => RequestKeys.Materialize(stream, forms: 0));
    }

    [Fact]
    public void A_cache_refuses_request_keys_built_without_the_form_it_reads()
    {
        using var subject = CacheSubjects.Create(CacheSubjects.Native, 1 << 20, 100, 100);
        subject.Fill(0, 100);
        Assert.Equal(KeyForms.Strings, subject.Reads);
        var utf8Only = RequestKeys.Materialize([.. Enumerable.Range(0, 64)], forms: KeyForms.Utf8);
        Assert.Contains("Strings", Assert.Throws<InvalidOperationException>(() => subject.Gets(0, utf8Only, 8)).Message, StringComparison.Ordinal);
        Assert.Equal(8, subject.Gets(0, RequestKeys.Materialize([.. Enumerable.Range(0, 64)], forms: subject.Reads), 8));
    }

    [Fact]
    public void The_second_thread_starts_half_the_stream_away_and_every_thread_goes_round_it()
    {
        // The key floor finds every key (it stores nothing); the copy floor reads each position's entry: a stream of
        // one stored and one unknown half tells which positions a thread read through a cache that holds the first half.
        using var subject = CacheSubjects.Create(CacheSubjects.Native, 1 << 20, 100, 100);
        subject.Fill(0, 100);
        var requests = RequestKeys.Materialize([.. Enumerable.Range(0, 64).Select(i => i < 32 ? i : 1000 + i)]);
        Assert.Equal(32, subject.Gets(0, requests, 32)); // thread 0 from position 0: the stored half
        Assert.Equal(0, subject.Gets(1, requests, 32)); // thread 1 from position 32: the unknown half
        Assert.Equal(0, subject.Gets(0, requests, 32)); // thread 0 goes on where it stopped
        Assert.Equal(32 * 3, subject.Gets(1, requests, 64 * 3)); // and round and round
    }

    [Theory]
    [InlineData(CacheSubjects.Native)]
    [InlineData(CacheSubjects.Floor)]
    [InlineData(CacheSubjects.IndexFloor)]
    [InlineData(CacheSubjects.KeyFloor)]
    public void The_throughput_loops_allocate_nothing_per_operation(string variant)
    {
        const int Entries = 4_096;
        using var subject = CacheSubjects.Create(variant, 1 << 24, Entries, Entries);
        subject.Fill(0, Entries);
        var requests = RequestKeys.Materialize(NativeCacheWorkload.Zipf(Entries, 1 << 14, seed: 2));
        for (int warm = 0; warm < 3; warm++)
        {
            subject.Gets(0, requests, 1 << 14);
            subject.Mix(0, requests, 1 << 14);
            subject.Sets(0, requests, 1 << 12);
        }
        long before = GC.GetAllocatedBytesForCurrentThread();
        long hits = subject.Gets(0, requests, 1 << 16) + subject.Mix(0, requests, 1 << 16) + subject.Sets(0, requests, 1 << 14);
        Assert.Equal(0, GC.GetAllocatedBytesForCurrentThread() - before);
        Assert.True(hits > 1 << 16);
    }

    [Fact]
    public void The_copy_floors_store_gives_back_each_slots_last_value_whole_and_rejects_what_it_cannot_hold()
    {
        var store = new FloorStore(1_000);
        Assert.Equal(0, store.Read(999).Length); // a slot never written is empty, not stray memory
        for (int i = 0; i < store.Entries; i++) store.Write(i, NativeCacheWorkload.Value(i));
        for (int i = 0; i < store.Entries; i++) Assert.True(NativeCacheWorkload.Value(i).SequenceEqual(store.Read(i)));
        // A rewrite of another size replaces the slot's value, its neighbours untouched.
        store.Write(500, NativeCacheWorkload.Value(7, NativeCacheWorkload.MaxValueBytes));
        store.Write(501, NativeCacheWorkload.Value(8, NativeCacheWorkload.MinValueBytes));
        Assert.True(NativeCacheWorkload.Value(7, NativeCacheWorkload.MaxValueBytes).SequenceEqual(store.Read(500)));
        Assert.True(NativeCacheWorkload.Value(8, NativeCacheWorkload.MinValueBytes).SequenceEqual(store.Read(501)));
        Assert.True(NativeCacheWorkload.Value(499).SequenceEqual(store.Read(499)));
        Assert.True(NativeCacheWorkload.Value(502).SequenceEqual(store.Read(502)));
        Assert.Throws<ArgumentOutOfRangeException>(() => store.Write(0, new byte[NativeCacheWorkload.MaxValueBytes + 1]));
        Assert.Throws<ArgumentOutOfRangeException>(() => store.Read(1_000));
        Assert.Throws<ArgumentOutOfRangeException>(() => store.Read(-1));
        Assert.Throws<ArgumentOutOfRangeException>(() => new FloorStore(0));
        store.Dispose();
        Assert.Throws<ObjectDisposedException>(() => store.Read(0));
        store.Dispose(); // twice is harmless
    }

    [Fact]
    public void The_copy_floor_hits_every_key_and_keeps_each_rewrite()
    {
        using var floor = CacheSubjects.Create(CacheSubjects.Floor, 1 << 20, 1_000, 1_000);
        floor.Fill(0, 1_000);
        var requests = RequestKeys.Materialize([.. Enumerable.Range(0, 1 << 10).Select(i => i % 1_000)]);
        Assert.Equal(1 << 10, floor.Gets(0, requests, 1 << 10));
        Assert.Equal(1 << 10, floor.Sets(0, requests, 1 << 10));
        Assert.Equal(1_000, floor.Count);
    }

    [Fact]
    public void The_floor_index_finds_the_slot_its_hash_bucket_was_last_linked_to_by_the_hash_s_low_bits()
    {
        using var index = new FloorIndex(8);
        Assert.Equal(8, index.Buckets);
        for (ulong h = 0; h < 8; h++) Assert.Equal(-1, index.Find(h)); // a bucket never linked names no slot
        index.Link(3, 41);
        Assert.Equal(41, index.Find(3));
        Assert.Equal(41, index.Find(3 + 8)); // the bucket is the hash's low bits under the mask, as NativeCache's
        Assert.Equal(41, index.Find(3 | (0xABCDUL << 32))); // the high word picks no bucket
        Assert.Equal(-1, index.Find(4));
        index.Link(11, 7); // a colliding key overwrites: the floor compares no keys
        Assert.Equal(7, index.Find(3));
        index.Link(0, 0); // slot 0 is a reference, not an empty bucket
        Assert.Equal(0, index.Find(8));
        Assert.Throws<ArgumentOutOfRangeException>(() => index.Link(1, -1));
        Assert.Throws<ArgumentOutOfRangeException>(() => new FloorIndex(0));
        Assert.Throws<ArgumentOutOfRangeException>(() => new FloorIndex(12));
        Assert.Throws<ArgumentOutOfRangeException>(() => new FloorIndex((1L << 32) + 1));
        index.Dispose();
        Assert.Throws<ObjectDisposedException>(() => index.Find(3));
        index.Dispose(); // twice is harmless
    }

    [Fact]
    public void The_floor_index_has_as_many_buckets_as_NativeCache_s_index_at_the_budget()
    {
        // One 4-byte bucket per 128 bytes of budget, rounded down to a power of two (CacheLayout): the quick run's 1 GiB, 8 Mi buckets, 32 MiB.
        Assert.Equal(1L << 23, FloorIndex.BucketsFor(1L << 30));
        Assert.Equal(1L << 23, FloorIndex.BucketsFor((1L << 30) + (1L << 29)));
        Assert.Equal(1L << 17, FloorIndex.BucketsFor(1L << 24));
    }

    [Fact]
    public void The_indexed_floor_fills_the_shared_store_and_its_index_and_finds_what_was_filled()
    {
        const int Entries = 1_000;
        using var store = new FloorStore(Entries);
        using var indexed = CacheSubjects.CreateIndexFloor(1L << 24, store, ownsStore: false);
        using var copy = CacheSubjects.CreateFloor(store, ownsStore: false);
        Assert.Equal(CacheSubjects.IndexFloor, indexed.Variant);
        indexed.Fill(0, Entries);
        for (int i = 0; i < Entries; i++) Assert.True(NativeCacheWorkload.Value(i).SequenceEqual(store.Read(i))); // the fill wrote every slot
        var stored = RequestKeys.Materialize([.. Enumerable.Range(0, 1 << 12).Select(i => i % Entries)]);
        Assert.Equal(1 << 12, indexed.Gets(0, stored, 1 << 12)); // every filled key's bucket names a slot
        Assert.Equal(1 << 12, copy.Gets(0, stored, 1 << 12)); // and the copy floor reads the same slots
        // Keys never filled land mostly in empty buckets of 65,536 (1,000 linked): a miss, not stray memory.
        var unknown = RequestKeys.Materialize([.. Enumerable.Range(Entries, 1 << 12)]);
        Assert.InRange(indexed.Gets(0, unknown, 1 << 12), 0, (1 << 12) / 10);
        indexed.Mix(0, stored, 1 << 12);
        Assert.InRange(store.Read(0).Length, NativeCacheWorkload.MinValueBytes, NativeCacheWorkload.MaxValueBytes);
        indexed.Dispose();
        copy.Dispose();
        Assert.InRange(store.Read(0).Length, NativeCacheWorkload.MinValueBytes, NativeCacheWorkload.MaxValueBytes); // the subjects left the store they do not own alive
    }

    [Fact]
    public void NativeCache_s_child_measures_the_indexed_floor_beside_the_copy_floor_and_its_table_shows_it()
    {
        var context = new ExperimentContext("native-cache", RunSettings.Smoke());
        var plan = new NativeCachePlan(CacheSubjects.Native, 2_000, NativeCacheProbe.OverflowBudget(RunSettings.Smoke()));
        NativeCacheProbe.Run(context, plan);
        foreach (string floor in new[] { CacheSubjects.Floor, CacheSubjects.IndexFloor })
        {
            foreach (int threads in new[] { 1, 2 }) Assert.Single(context.Measurements, m => m.Variant == floor && m.Parameters.Is("op", "mix") && m.Threads == threads);
            Assert.Single(context.Measurements, m => m.Variant == floor && m.Parameters.Is("op", "get")); // where the copy floor has gets, so has it
        }
        NativeCache.AddTables(context, plan);
        var table = Assert.Single(context.Tables, t => t.Title.StartsWith("The mix in NativeCache's child beside its floors", StringComparison.Ordinal));
        Assert.Contains("1 thread ÷ indexed floor", table.Columns);
        var row = Assert.Single(table.Rows, r => r[0] == CacheSubjects.IndexFloor);
        Assert.All(row.Skip(1), cell => Assert.NotEqual("n/a", cell));
        Assert.All(table.Rows.Single(r => r[0] == CacheSubjects.Native).Skip(1), cell => Assert.NotEqual("n/a", cell));
    }

    [Fact]
    public void The_indexed_ceiling_is_a_variant_s_mix_time_over_the_indexed_floor_s_and_no_target_reads_it()
    {
        Measurement M(string variant, int threads, double ns) => new()
        {
            Variant = variant,
            Parameters = Parameters.Of(("entries", 1000L), ("op", "mix")),
            Threads = threads,
            Unit = Unit.NsPerOp,
            Statistics = Statistics.From([ns]),
        };
        var f = new Figures([M(CacheSubjects.Memory, 1, 800), M(CacheSubjects.IndexFloor, 1, 250), M(CacheSubjects.Native, 1, 500), M(CacheSubjects.Floor, 1, 200)], random: null);
        Assert.Equal(3.2, NativeCache.IndexedCeiling(f, CacheSubjects.Memory, 1)!.Value, 9);
        Assert.Equal(2.0, NativeCache.IndexedCeiling(f, CacheSubjects.Native, 1)!.Value, 9);
        Assert.Null(NativeCache.IndexedCeiling(f, CacheSubjects.Memory, 2));
        // The 3x target's floor stays the copy floor: no target or floor metric names the indexed floor.
        Assert.All(new NativeCache().Targets, t => Assert.DoesNotContain("index", t.Metric.Name + t.Floor?.Metric.Name, StringComparison.OrdinalIgnoreCase));
    }

    [Fact]
    public void Request_keys_say_whether_every_string_reached_a_generation()
    {
        var requests = RequestKeys.Materialize(NativeCacheWorkload.Zipf(1_000, 1 << 10, seed: 2));
        GC.Collect(GC.MaxGeneration, GCCollectionMode.Forced, blocking: true, compacting: true);
        GC.Collect(GC.MaxGeneration, GCCollectionMode.Forced, blocking: true, compacting: true);
        Assert.True(requests.AllInGeneration(GC.MaxGeneration));
        Assert.False(requests.AllInGeneration(GC.MaxGeneration + 1)); // no string is older than the oldest generation
        GC.KeepAlive(requests);
    }

    [Theory]
    [InlineData(CacheSubjects.Faster)]
    [InlineData(CacheSubjects.Native)]
    [InlineData(CacheSubjects.Memory)]
    public void No_child_replays_the_hit_ratio_traces_the_experiment_s_process_does(string variant)
    {
        // The replays run in the experiment's process, in its children's untimed windows (UntimedWorkTests).
        var context = new ExperimentContext("native-cache", RunSettings.Smoke());
        NativeCacheProbe.Run(context, new NativeCachePlan(variant, 2_000, NativeCacheProbe.OverflowBudget(RunSettings.Smoke())), throughput: false);
        Assert.DoesNotContain(context.Measurements, m => m.Parameters.Is("op", NativeCacheTraces.PairedOp) || m.Parameters.Is("op", "hit-ratio"));
        Assert.Contains(context.Measurements, m => m.Variant == variant && m.Parameters.Is("op", "full-gc"));
    }

    [Fact]
    public void Replays_run_in_windows_are_recorded_as_those_run_at_once_would_be()
    {
        // Some replicas run while the work is open, the rest at Record: every trace and capacity keeps its samples.
        var context = new ExperimentContext("native-cache", RunSettings.Smoke());
        using (var replays = new NativeCacheTraces.Replays(RunSettings.Smoke(), default))
        {
            replays.Work.Open();
            SpinWait.SpinUntil(() => replays.Work.Done > 0, TimeSpan.FromSeconds(30));
            replays.Work.Close();
            replays.Record(context);
            Assert.Equal(NativeCacheTraces.Replicas(RunSettings.Smoke()), replays.Work.Done);
        }
        foreach (string trace in NativeCacheTraces.All)
        {
            var native = Assert.Single(context.Measurements, m => m.Variant == CacheSubjects.Native && m.Parameters.Is("op", "hit-ratio") && m.Parameters.Is("trace", trace));
            Assert.Equal(NativeCacheTraces.Replicas(RunSettings.Smoke(), trace), native.Statistics.Count);
            Assert.Equal(2, context.Measurements.Count(m => m.Parameters.Is("op", NativeCacheTraces.PairedOp) && m.Parameters.Is("trace", trace)));
        }
    }

    [Theory]
    [InlineData(CacheSubjects.Native, 3)]
    [InlineData(CacheSubjects.Memory, 1)]
    public void Quick_mode_takes_three_settled_pauses_of_NativeCache_each_weighed_and_one_of_an_anchor(string variant, int collections)
    {
        // Quick mode's later launches no longer fill the cache: the pause and managed-bytes targets need NativeCache's
        // child to give more than one sample of each, or they have no interval and are never judged.
        var context = new ExperimentContext("native-cache", RunSettings.Quick());
        NativeCacheProbe.Run(context, new NativeCachePlan(variant, 2_000, NativeCacheProbe.OverflowBudget(RunSettings.Smoke())), throughput: false);
        var pause = Assert.Single(context.Measurements, m => m.Variant == variant && m.Parameters.Is("op", "full-gc"));
        var managed = Assert.Single(context.Measurements, m => m.Variant == variant && m.Parameters.Is("op", "managed-bytes"));
        Assert.Equal(2_000, pause.Parameters.Long("entries")); // quick mode: at the full entry count only
        Assert.Equal(collections, pause.Statistics.Count);
        Assert.Equal(collections, managed.Statistics.Count);
    }

    [Fact]
    public void A_run_without_the_pauses_measures_the_memory_growth_alone_and_the_throughput_needs_the_pauses()
    {
        // Quick mode's later launches: NativeCache's memory growth, first thing in a fresh process, and no million-entry fill.
        var plan = new NativeCachePlan(CacheSubjects.Native, 2_000, NativeCacheProbe.OverflowBudget(RunSettings.Smoke()));
        var context = new ExperimentContext("native-cache", RunSettings.Smoke());
        NativeCacheProbe.Run(context, plan, throughput: false, pauses: false);
        Assert.NotEmpty(context.Measurements);
        Assert.All(context.Measurements, m => Assert.True(m.Parameters.Is("op", "memory-growth"), $"{m.Variant} {m.Parameters}"));
        var refused = Assert.Throws<ArgumentException>(() => NativeCacheProbe.Run(new ExperimentContext("native-cache", RunSettings.Smoke()), plan, throughput: true, pauses: false));
        Assert.Contains("pause", refused.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void The_key_floor_is_a_variant_the_experiment_knows_but_no_child_of_its_own()
    {
        Assert.Contains(CacheSubjects.KeyFloor, CacheSubjects.All);
        Assert.DoesNotContain(CacheSubjects.KeyFloor, CacheSubjects.Caches);
        Assert.Throws<ArgumentException>(() => NativeCachePlan.Parse([CacheSubjects.KeyFloor, "1000", "1048576"]));
    }

    public static TheoryData<string> Caches() => new(CacheSubjects.Caches);

    [Theory]
    [MemberData(nameof(Caches))]
    public void Every_cache_finds_every_entry_within_a_budget_that_holds_them_and_survives_the_mix(string variant)
    {
        var plan = new NativeCachePlan(variant, 20_000, 1 << 20);
        using var subject = CacheSubjects.Create(variant, plan.FullBudget, plan.Entries, plan.Entries);
        subject.Fill(0, plan.Entries);
        if (subject.Count >= 0) Assert.Equal(plan.Entries, subject.Count);
        var uniform = RequestKeys.Materialize([.. Enumerable.Range(0, 1 << 15).Select(i => i % plan.Entries)]);
        Assert.Equal(1 << 15, subject.Gets(0, uniform, 1 << 15)); // every key stored was found
        subject.Mix(0, uniform, 1 << 14);
        Parallel.For(0, 2, t => subject.Mix(t, uniform, 1 << 14));
        subject.Sets(0, uniform, 1 << 12);
        Assert.Equal(1 << 15, subject.Gets(0, uniform, 1 << 15)); // still every key, after writes from two threads
        Assert.Equal(1 << 15, subject.Gets(1, uniform, 1 << 15)); // and from the second thread's start, half the stream on
    }

    [Theory]
    [MemberData(nameof(Caches))]
    public void Two_threads_filling_halves_through_their_own_operations_store_every_entry(string variant)
    {
        // The pause phase fills a managed cache half on each core (NativeCacheProbe): no entry may be lost to the race.
        const int Entries = 20_000;
        var plan = new NativeCachePlan(variant, Entries, 1 << 20);
        using var subject = CacheSubjects.Create(variant, plan.FullBudget, Entries, Entries);
        LabThreads.RunTogether(2, half => subject.Fill(half * (Entries / 2), (half + 1) * (Entries / 2), thread: half));
        if (subject.Count >= 0) Assert.Equal(Entries, subject.Count);
        Assert.Equal(Entries, subject.Gets(0, RequestKeys.Materialize([.. Enumerable.Range(0, Entries)]), Entries));
    }

    [Fact]
    public void A_key_never_stored_misses_in_every_cache()
    {
        foreach (string variant in CacheSubjects.Caches)
        {
            using var subject = CacheSubjects.Create(variant, 1 << 20, 1000, 1000);
            subject.Fill(0, 1000);
            var missing = RequestKeys.Materialize([.. Enumerable.Range(1000, 16)]);
            Assert.True(subject.Gets(0, missing, 16) == 0, variant);
        }
    }

    [Theory]
    [MemberData(nameof(Caches))]
    public void The_memory_phase_tiers_up_its_first_use_and_records_the_growth_at_every_overflow_checkpoint(string variant)
    {
        // The first use goes round its keys (TierUp's calls outnumber them); a key past the ones it was made for would
        // break the count-sized variants. The resident figures are the test process's, so only their presence is checked.
        var plan = new NativeCachePlan(variant, 2_000, NativeCacheProbe.OverflowBudget(RunSettings.Smoke()));
        var context = new ExperimentContext("native-cache", RunSettings.Smoke());
        NativeCacheProbe.Run(context, plan, throughput: false);
        var growth = context.Measurements.Where(m => m.Variant == variant && m.Parameters.Is("op", "memory-growth")).ToList();
        Assert.Equal(plan.OverflowCheckpoints.Select(c => (long)c), growth.Select(m => m.Parameters.Long("entries")));
        Assert.All(growth, m => Assert.Equal(plan.OverflowBudget, m.Metrics["budgetBytes"]));
        double held = growth[^1].Metrics["entriesHeld"];
        if (held < 0) return; // a variant that cannot count its entries
        if (variant == CacheSubjects.Dictionary) Assert.Equal(plan.OverflowCheckpoints[^1], held);
        else Assert.InRange(held, 1, plan.OverflowCheckpoints[^1] - 1); // twice the budget's bytes: a bounded cache evicted
    }

    [Theory]
    [InlineData(CacheSubjects.Memory)]
    [InlineData(CacheSubjects.Lru)]
    [InlineData(CacheSubjects.Faster)]
    public void A_bounded_cache_filled_past_its_budget_keeps_fewer_entries_than_it_was_given(string variant)
    {
        const long budget = 8 << 20; // FASTER's log is at least two 4 MiB pages
        int given = CacheSubjects.CapacityFor(budget) * 4;
        using var subject = CacheSubjects.Create(variant, budget, CacheSubjects.CapacityFor(budget), given);
        subject.Fill(0, given);
        long hits = subject.Gets(0, RequestKeys.Materialize([.. Enumerable.Range(0, given)]), given);
        Assert.InRange(hits, 1, given * 3 / 4);
    }

    [Fact]
    public void ConcurrentLrus_count_from_its_queues_is_the_entries_it_still_finds_after_evicting()
    {
        // Its count is the sum of its three queues' counts (its own Count enumerates a million entries): after evictions
        // it must still be exactly the entries a lookup finds.
        const long budget = 1 << 20;
        int capacity = CacheSubjects.CapacityFor(budget), given = capacity * 3;
        using var subject = CacheSubjects.Create(CacheSubjects.Lru, budget, capacity, given);
        subject.Fill(0, given);
        long found = subject.Gets(0, RequestKeys.Materialize([.. Enumerable.Range(0, given)]), given);
        Assert.InRange(found, 1, given - 1); // it evicted
        Assert.Equal(found, subject.Count);
    }

    [Theory]
    [InlineData(CacheSubjects.Memory)]
    [InlineData(CacheSubjects.Native)]
    public void The_throughput_phase_finds_every_key_it_stored_in_its_last_reads(string variant)
    {
        // After the throughput phases (writes of new values from one and two threads), every key stored is still found.
        var context = new ExperimentContext("native-cache", RunSettings.Smoke());
        NativeCacheProbe.Run(context, new NativeCachePlan(variant, 2_000, NativeCacheProbe.OverflowBudget(RunSettings.Smoke())));
        var hits = Assert.Single(context.Measurements, m => m.Variant == variant && m.Parameters.Is("op", "throughput-hits"));
        Assert.Equal(100.0, hits.Statistics.Median);
    }

    [Theory]
    [InlineData((48L << 20) - 1, 32L << 20)]
    [InlineData(48L << 20, 64L << 20)] // midway: the larger
    [InlineData(40L << 20, 32L << 20)]
    [InlineData(50L << 20, 64L << 20)]
    [InlineData(64L << 20, 64L << 20)]
    [InlineData(1000L, 8L << 20)]
    public void Faster_log_is_the_power_of_two_nearest_the_budget_and_at_least_two_pages(long budget, long expected)
        => Assert.Equal(expected, FasterCacheSubject.LogBytes(budget));

    [Fact]
    public void The_full_budget_holds_every_entry_with_room_and_is_a_power_of_two()
    {
        var plan = new NativeCachePlan(CacheSubjects.Native, 1_000_000, 32 << 20);
        Assert.True(plan.FullBudget >= 1_000_000 * (NativeCacheWorkload.MeanEntryBytes + 128));
        Assert.Equal(0, plan.FullBudget & (plan.FullBudget - 1));
        Assert.Equal([250_000, 500_000, 1_000_000], plan.Checkpoints);
        int once = CacheSubjects.CapacityFor(32 << 20);
        Assert.Equal([once / 2, once, once * 2], plan.OverflowCheckpoints);
    }

    [Fact]
    public void A_plan_round_trips_through_the_child_arguments_and_a_bad_one_is_refused()
    {
        var plan = new NativeCachePlan(CacheSubjects.Lfu, 1_000_000, 32 << 20);
        Assert.Equal(plan, NativeCachePlan.Parse(plan.ToArguments()));
        Assert.Contains("'nope'", Assert.Throws<ArgumentException>(() => NativeCachePlan.Parse(["nope", "100", "1048576"])).Message, StringComparison.Ordinal);
        Assert.Contains("'10'", Assert.Throws<ArgumentException>(() => NativeCachePlan.Parse([CacheSubjects.Lfu, "10", "1048576"])).Message, StringComparison.Ordinal);
        Assert.Contains("'100'", Assert.Throws<ArgumentException>(() => NativeCachePlan.Parse([CacheSubjects.Lfu, "1000", "100"])).Message, StringComparison.Ordinal);
        Assert.Contains("3 arguments", Assert.Throws<ArgumentException>(() => NativeCachePlan.Parse([CacheSubjects.Lfu, "1000"])).Message, StringComparison.Ordinal);
        // The floor is not a cache: no child of its own.
        Assert.Throws<ArgumentException>(() => NativeCachePlan.Parse([CacheSubjects.Floor, "1000", "1048576"]));
        Assert.Throws<ArgumentException>(() => NativeCachePlan.Parse([CacheSubjects.IndexFloor, "1000", "1048576"]));
    }

    [Fact]
    public void The_scan_trace_interleaves_zipf_with_one_pass_scans_of_fresh_keys()
    {
        const int workingSet = 4_000;
        var trace = NativeCacheTraces.ScanTrace(workingSet, 40_000, seed: 1);
        var fresh = trace.Where(i => i >= workingSet).ToArray();
        Assert.Equal(fresh.Length, fresh.Distinct().Count()); // every scanned key once
        Assert.All(trace[..workingSet], i => Assert.InRange(i, 0, workingSet - 1));
        int scan = CacheSubjects.CapacityFor(NativeCacheTraces.Budget(workingSet));
        Assert.All(trace.AsSpan(workingSet, scan).ToArray(), i => Assert.True(i >= workingSet));
        Assert.Equal(Enumerable.Range(0, 10).Concat(Enumerable.Range(0, 10)).Concat(Enumerable.Range(0, 5)), NativeCacheTraces.LoopTrace(10, 25));
    }

    [Fact]
    public void The_hit_ratios_are_recorded_per_replica_for_every_trace_and_capacity_with_their_paired_ratios()
    {
        var context = new ExperimentContext("native-cache", RunSettings.Smoke());
        NativeCacheTraces.Run(context);
        foreach (string trace in NativeCacheTraces.All)
        {
            int replicas = NativeCacheTraces.Replicas(RunSettings.Smoke(), trace);
            Assert.True(replicas >= 2);
            var native = Assert.Single(context.Measurements, m => m.Variant == CacheSubjects.Native && m.Parameters.Is("op", "hit-ratio") && m.Parameters.Is("trace", trace));
            Assert.Equal(replicas, native.Statistics.Count);
            Assert.InRange(native.Statistics.Median, 0, 100);
            foreach (string capacity in new[] { NativeCacheTraces.Matched, NativeCacheTraces.ByBytes })
            {
                var lfu = Assert.Single(context.Measurements, m => m.Variant == CacheSubjects.Lfu && m.Parameters.Is("trace", trace) && m.Parameters.Is("capacity", capacity));
                int expected = capacity == NativeCacheTraces.ByBytes ? Math.Min(replicas, NativeCacheTraces.ByBytesReplicas(RunSettings.Smoke())) : replicas;
                Assert.Equal(expected, lfu.Statistics.Count);
                var paired = Assert.Single(context.Measurements, m => m.Variant == CacheSubjects.Native && m.Parameters.Is("op", NativeCacheTraces.PairedOp) && m.Parameters.Is("trace", trace) && m.Parameters.Is("capacity", capacity));
                Assert.Equal(expected, paired.Statistics.Count);
                Assert.All(paired.Statistics.Samples, r => Assert.InRange(r, 0.5, 2.0));
            }
            var matched = context.Measurements.Single(m => m.Variant == CacheSubjects.Lfu && m.Parameters.Is("trace", trace) && m.Parameters.Is("capacity", NativeCacheTraces.Matched));
            Assert.Equal(native.Metrics["entriesHeld"], matched.Metrics["capacity"]);
        }
        // A quarter of the working set under Zipf 0.9 still hits often; a loop larger than the cache defeats pure recency.
        Assert.InRange(context.Measurements.Single(m => m.Variant == CacheSubjects.Native && m.Parameters.Is("op", "hit-ratio") && m.Parameters.Is("trace", NativeCacheTraces.Zipf)).Statistics.Median, 20, 100);
    }

    [Fact]
    public void Lfu_by_bytes_runs_in_at_least_two_replicas_and_never_in_more_than_the_traces()
    {
        // Each paired ratio at the budget ÷ mean entry divides the same replica's NativeCache ratio.
        foreach (var settings in new[] { RunSettings.Smoke(), RunSettings.Quick(), RunSettings.Full() })
        {
            foreach (string trace in NativeCacheTraces.All) Assert.InRange(NativeCacheTraces.ByBytesReplicas(settings), 2, NativeCacheTraces.Replicas(settings, trace));
            // The Zipf trace has the most replicas: every replica runs it, and the loop's length follows from it.
            Assert.All(NativeCacheTraces.All, trace => Assert.InRange(NativeCacheTraces.Replicas(settings, trace), 2, NativeCacheTraces.Replicas(settings, NativeCacheTraces.Zipf)));
            Assert.Equal(NativeCacheTraces.Replicas(settings), NativeCacheTraces.Replicas(settings, NativeCacheTraces.Zipf));
        }
    }

    [Fact]
    public void The_hit_ratio_target_reads_the_median_of_the_paired_ratios_and_its_interval_spans_the_replicas()
    {
        Measurement Paired(string trace, string capacity, double[] ratios) => new()
        {
            Variant = CacheSubjects.Native,
            Parameters = Parameters.Of(("op", NativeCacheTraces.PairedOp), ("trace", trace), ("capacity", capacity)),
            Unit = Unit.Ratio,
            LowerIsBetter = false,
            Statistics = Statistics.From(ratios),
        };
        var measurements = new[]
        {
            Paired(NativeCacheTraces.Zipf, NativeCacheTraces.Matched, [0.98, 1.02, 1.01, 0.99, 1.03]),
            Paired(NativeCacheTraces.Zipf, NativeCacheTraces.ByBytes, [0.5, 0.5, 0.5]),
        };
        var target = new NativeCache().Targets.Single(t => t.Metric.Name.StartsWith($"hit ratio, {NativeCacheTraces.Zipf} trace", StringComparison.Ordinal));
        Assert.Equal(1.01, target.Metric.Compute(new Figures(measurements, random: null))!.Value, 9);
    }

    [Fact]
    public void A_salt_draws_other_letters_in_keys_of_the_same_lengths()
    {
        var plain = NativeCacheWorkload.KeyStrings(1000);
        var salted = NativeCacheWorkload.KeyStrings(1000, salt: 0x9E3779B97F4A7C15UL);
        Assert.Equal(plain, NativeCacheWorkload.KeyStrings(1000, salt: 0)); // no salt: the experiment's keys as before
        Assert.Equal(plain.Select(k => k.Length), salted.Select(k => k.Length));
        Assert.Equal(salted.Length, salted.Distinct(StringComparer.Ordinal).Count());
        Assert.True(plain.Zip(salted).Count(p => p.First != p.Second) > 990);
    }

    [Fact]
    public void Every_target_reads_its_figure_at_the_largest_entry_count()
    {
        Measurement M(string variant, string op, long entries, double value) => new()
        {
            Variant = variant,
            Parameters = Parameters.Of(("entries", entries), ("op", op)),
            Unit = Unit.Milliseconds,
            Statistics = Statistics.From([value]),
        };
        var measurements = new[]
        {
            M(CacheSubjects.Memory, "full-gc", 10, 100), M(CacheSubjects.Memory, "full-gc", 40, 400),
            M(CacheSubjects.Native, "full-gc", 10, 1), M(CacheSubjects.Native, "full-gc", 40, 4),
        };
        var target = new NativeCache().Targets.Single(t => t.Metric.Name == "NativeCache: full GC pause with the cache full vs MemoryCache's");
        Assert.Equal(0.01, target.Metric.Compute(new Figures(measurements, random: null))!.Value, 9);
        Assert.Equal(100, new NativeCache().Claim!.Today.Compute(new Figures(measurements, random: null))!.Value, 9);
    }
}

/// <summary>The native-cache experiment's managed bytes, read from the process's heap: run alone, so no other test collects in between.</summary>
[Collection(ProcessWideCollection.Name)]
public sealed class NativeCacheHeapTests
{
    [Fact]
    public void Managed_bytes_are_read_at_the_full_collection_and_count_what_it_left_alive_not_what_was_allocated_after_it()
    {
        // GC.GetTotalMemory counted garbage allocated after the collection and the unused rest of every thread's
        // allocation context (up to 8 KiB) as the cache's: ±0.008 B per entry of a million, most of the 0.01 B target.
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        long atCollection = NativeCacheProbe.LiveBytesAfterFullCollection();
        long total = GC.GetTotalMemory(forceFullCollection: false);
        for (int i = 0; i < 1024; i++) GC.KeepAlive(new byte[100]);
        Assert.True(GC.GetTotalMemory(forceFullCollection: false) - total >= 100 * 1024); // the old reading moved with the garbage
        Assert.Equal(atCollection, NativeCacheProbe.LiveBytesAfterFullCollection());

        // The kept megabyte is counted. Objects of the test host that were alive at one collection may be gone by the next
        // (a few KiB, or tens of MB another test left to its finalizers), and the test host's own threads may keep what they
        // allocate in between (its reporting of results, on a loaded machine), so the reading is taken again, up to twenty
        // times, until nothing else changed between the two collections; a reading that missed the array would read near 0
        // every time.
        long counted = 0;
        var readings = new List<long>();
        for (int attempt = 0; attempt < 20; attempt++)
        {
            counted = CountKeptMegabyte();
            readings.Add(counted);
            if (counted >= (1 << 20) && counted <= (1 << 20) + (256 << 10)) break;
        }
        Assert.True(counted >= (1 << 20) && counted <= (1 << 20) + (256 << 10), $"bytes counted for a kept 1 MiB array, each attempt: {string.Join(", ", readings)}");
    }

    /// <summary>
    /// One attempt, in a frame of its own: a local array of the test's loop could stay reported live from its stack slot
    /// into the next attempt's first reading (the JIT may keep a loop's locals untracked), and the next array would then
    /// only replace it (every attempt after the first read 0 that way).
    /// </summary>
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private static long CountKeptMegabyte()
    {
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        GC.WaitForPendingFinalizers();
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        long before = NativeCacheProbe.LiveBytesAfterFullCollection();
        var kept = new byte[1 << 20];
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        long counted = NativeCacheProbe.LiveBytesAfterFullCollection() - before;
        GC.KeepAlive(kept);
        return counted;
    }
}
