using System.Buffers;
using Manaloc.Collections;
using Xunit.Abstractions;

namespace Manaloc.Tests.Collections;

/// <summary>
/// The eviction policy's behaviour on small generated traces, against an exact LRU holding as many entries as the
/// cache holds: a frequency-aware policy must match it on a skewed trace, beat it when one-pass scans interrupt the
/// skewed trace, and keep most of a loop slightly larger than the cache (where LRU keeps nothing). Hit ratios, no timing.
/// </summary>
public sealed class NativeCachePolicyTests(ITestOutputHelper output)
{
    private const long Budget = 1 << 20;
    private static readonly byte[] s_value = new byte[100];

    private sealed class ExactLru(int capacity)
    {
        private readonly Dictionary<long, LinkedListNode<long>> _nodes = [];
        private readonly LinkedList<long> _order = new();

        public bool Access(long key)
        {
            if (_nodes.TryGetValue(key, out var node))
            {
                _order.Remove(node);
                _order.AddFirst(node);
                return true;
            }
            if (_nodes.Count == capacity)
            {
                _nodes.Remove(_order.Last!.Value);
                _order.RemoveLast();
            }
            _nodes[key] = _order.AddFirst(key);
            return false;
        }
    }

    private static long[] Zipf(int keys, double s, int count, int seed)
    {
        var cdf = new double[keys];
        double sum = 0;
        for (int i = 0; i < keys; i++) cdf[i] = sum += 1 / Math.Pow(i + 1, s);
        var random = new Random(seed);
        var trace = new long[count];
        for (int i = 0; i < count; i++)
        {
            int at = Array.BinarySearch(cdf, random.NextDouble() * sum);
            trace[i] = at < 0 ? ~at : at;
        }
        return trace;
    }

    /// <summary>The entries the cache holds at its budget with these keys and values.</summary>
    private static int Capacity()
    {
        using var cache = new NativeCache(new NativeCacheOptions { MaxBytes = Budget });
        for (long k = 0; k < 100_000; k++) cache.Set(BitConverter.GetBytes(k), s_value);
        return (int)cache.Count;
    }

    private (double Native, double Lru) Replay(long[] trace, int capacity)
    {
        using var cache = new NativeCache(new NativeCacheOptions { MaxBytes = Budget });
        var lru = new ExactLru(capacity);
        var writer = new ArrayBufferWriter<byte>(256);
        long hits = 0, lruHits = 0;
        Span<byte> key = stackalloc byte[8];
        foreach (long k in trace)
        {
            BitConverter.TryWriteBytes(key, k);
            writer.ResetWrittenCount();
            if (cache.TryGet(key, writer)) hits++;
            else cache.Set(key, s_value);
            if (lru.Access(k)) lruHits++;
        }
        return ((double)hits / trace.Length, (double)lruHits / trace.Length);
    }

    [Fact]
    public void Hit_ratio_matches_LRU_on_Zipf_beats_it_under_scans_and_keeps_a_loop_larger_than_the_cache()
    {
        int capacity = Capacity();
        output.WriteLine($"capacity {capacity} entries");

        long[] zipf = Zipf(capacity * 4, 0.9, 300_000, 1);
        var (native, lru) = Replay(zipf, capacity);
        output.WriteLine($"zipf 0.9: native {native:F3}, LRU {lru:F3}");
        Assert.True(native >= lru, $"Zipf: {native:F3} below LRU's {lru:F3}");

        // Zipf with a one-pass scan of fresh keys (half the cache) after every 20,000 requests.
        var scanned = new List<long>();
        long fresh = 1L << 40;
        for (int i = 0; i < zipf.Length; i++)
        {
            scanned.Add(zipf[i]);
            if (i % 20_000 == 19_999) for (int j = 0; j < capacity / 2; j++) scanned.Add(fresh++);
        }
        (native, lru) = Replay([.. scanned], capacity);
        output.WriteLine($"zipf + scans: native {native:F3}, LRU {lru:F3}");
        Assert.True(native >= lru * 1.05, $"scans: {native:F3} not above LRU's {lru:F3}");

        // A loop 10% larger than the cache: LRU evicts each key just before it comes back.
        int loop = capacity * 11 / 10;
        long[] looped = [.. Enumerable.Range(0, loop * 8).Select(i => (long)(i % loop))];
        (native, lru) = Replay(looped, capacity);
        output.WriteLine($"loop of {loop}: native {native:F3}, LRU {lru:F3}");
        Assert.True(native >= 0.6, $"loop: {native:F3} of the requests hit");
    }

    [Fact]
    public void A_read_gives_an_entry_a_second_chance_against_newcomers_estimated_more_frequent()
    {
        // The cache is filled without reads, so every entry waits in probation, the oldest first. Ten of the oldest
        // are then read once (estimated at 2); each newcomer is set three times (estimated at 3), so by frequency alone
        // it wins against every old entry it meets. Reads move nothing: only the mark a read leaves keeps the ten,
        // promoted when eviction reaches them, while the unread old entries go.
        int capacity = Capacity();
        using var cache = new NativeCache(new NativeCacheOptions { MaxBytes = Budget });
        for (long k = 0; k < capacity; k++) cache.Set(BitConverter.GetBytes(k), s_value);
        Assert.Equal(capacity, cache.Count);
        var writer = new ArrayBufferWriter<byte>(256);
        for (long k = 0; k < 10; k++) Assert.True(cache.TryGet(BitConverter.GetBytes(k), writer));
        for (long k = 1_000_000; k < 1_000_000 + capacity / 2; k++)
        {
            for (int i = 0; i < 3; i++) cache.Set(BitConverter.GetBytes(k), s_value);
        }
        int read = 0, unread = 0;
        for (long k = 0; k < 10; k++) read += cache.TryGet(BitConverter.GetBytes(k), writer) ? 1 : 0;
        for (long k = 10; k < capacity; k++) unread += cache.TryGet(BitConverter.GetBytes(k), writer) ? 1 : 0;
        output.WriteLine($"read entries kept {read} of 10, unread kept {unread} of {capacity - 10}");
        Assert.Equal(10, read);
        Assert.True(unread < (capacity - 10) * 3 / 4, $"{unread} of {capacity - 10} unread entries kept: the newcomers did not press");
    }

    /// <summary>Writes distinct entries until the store has taken half its blocks, from which its sketch counts; returns how many.</summary>
    private static int FillToHalfTheBlocks(CacheStore store, ref CacheCounters counters)
    {
        var value = new byte[1000];
        int written = 0;
        while (!store.CountsFrequency)
        {
            byte[] key = System.Text.Encoding.ASCII.GetBytes($"fill-{written++}");
            store.Set(key, CacheHashing.Hash(key), value, default, value.Length, CacheStore.Never, CacheStore.Never, 0, 0, ref counters);
        }
        return written;
    }

    [Fact]
    public unsafe void Reads_are_counted_only_from_half_the_blocks_and_writes_from_the_first()
    {
        // Caffeine's rule for reads: below half the budget no eviction is near, so a read only marks its entry (no ring
        // record, no drain); from half the blocks on (never back: blocks stay until the store is freed) every read counts.
        // Writes count from the first, so what was inserted early is not unknown to the sketch when eviction begins.
        var store = new CacheStore(new CacheLayout(1 << 20));
        try
        {
            var counters = new CacheCounters();
            byte[] key = "early"u8.ToArray();
            ulong hash = CacheHashing.Hash(key);
            store.Set(key, hash, "value"u8, default, 5, CacheStore.Never, CacheStore.Never, 0, 0, ref counters);
            Assert.False(store.CountsFrequency);
            Assert.Equal(1, store.Frequency(hash));
            byte* entry = store.Find(key, hash, out _);
            for (int i = 0; i < 40; i++) Assert.False(store.Touch(entry, null, 0)); // no stripe fills, so none asks for a drain
            store.Drain();
            Assert.Equal(1, store.Frequency(hash));
            Assert.True(CacheStore.ReadMarked(entry)); // the read's mark is kept: the CLOCK queues still see recency
            int filled = FillToHalfTheBlocks(store, ref counters);
            Assert.True(filled > 1);
            entry = store.Find(key, hash, out _);
            for (int i = 0; i < 5; i++) store.Touch(entry, null, 0);
            store.Drain();
            Assert.Equal(1 + 5, store.Frequency(hash));
        }
        finally
        {
            store.Free();
        }
    }

    [Fact]
    public unsafe void A_read_recorded_under_any_stripe_number_lands_in_a_stripe_and_is_counted_by_the_drain()
    {
        // The record's stripe is the thread's number masked to the stripes: numbers past the stripe count and negative
        // ones must each land in a stripe, one record each, all drained into the sketch.
        var store = new CacheStore(new CacheLayout(1 << 20));
        try
        {
            var counters = new CacheCounters();
            FillToHalfTheBlocks(store, ref counters);
            byte[] key = "recorded"u8.ToArray();
            ulong hash = CacheHashing.Hash(key);
            store.Set(key, hash, "value"u8, default, 5, CacheStore.Never, CacheStore.Never, 0, 0, ref counters);
            store.Drain();
            int before = store.Frequency(hash);
            int[] stripes = [0, 1, 7, 64, 1000, int.MaxValue, -1, int.MinValue, -65];
            byte* entry = store.Find(key, hash, out _);
            foreach (int stripe in stripes) store.Touch(entry, null, stripe);
            store.Drain();
            Assert.Equal(before + stripes.Length, store.Frequency(hash));
        }
        finally
        {
            store.Free();
        }
    }

    [Fact]
    public unsafe void A_readers_own_drain_takes_its_stripes_records_only_and_the_writers_drain_takes_the_rest()
    {
        // A reader whose stripe wrapped drains its own stripe (another thread's ring lines stay in that thread's core); the
        // other stripes' records are not lost: the writer's drain before an eviction, or their own reader, counts them.
        var store = new CacheStore(new CacheLayout(1 << 20));
        try
        {
            var counters = new CacheCounters();
            FillToHalfTheBlocks(store, ref counters);
            byte[] key = "own stripe"u8.ToArray();
            ulong hash = CacheHashing.Hash(key);
            store.Set(key, hash, "value"u8, default, 5, CacheStore.Never, CacheStore.Never, 0, 0, ref counters);
            store.Drain();
            int before = store.Frequency(hash);
            byte* entry = store.Find(key, hash, out _);
            const int own = 3, other = 5;
            for (int i = 0; i < own; i++) store.Touch(entry, null, 0);
            for (int i = 0; i < other; i++) store.Touch(entry, null, 1);
            store.DrainOwn(0);
            // With one stripe (one processor) stripe 1 is stripe 0: its own drain takes both threads' records.
            bool oneStripe = store.ReadRingLayout().Stripes.Length == 1;
            Assert.Equal(before + own + (oneStripe ? other : 0), store.Frequency(hash));
            store.Drain();
            Assert.Equal(before + own + other, store.Frequency(hash));
        }
        finally
        {
            store.Free();
        }
    }

    [Fact]
    public unsafe void A_drain_counts_exactly_one_increment_per_record_in_read_order_also_across_aging()
    {
        // The drain inlines the increment and computes the aging period once per drain: its sketch must be the one the
        // reference rule (Increment per read, in read order) makes. The smallest sketch (16 words) with 20 entries ages
        // every 200 samples, so 5,000 skewed reads, drained at random points (never more than a stripe holds), age it many times.
        var layout = new CacheLayout(NativeCache.MinimumMaxBytes);
        var drained = new CacheStore(layout);
        var reference = new CacheStore(layout);
        try
        {
            var counters = new CacheCounters();
            var keys = new byte[20][];
            var hashes = new ulong[keys.Length];
            for (int k = 0; k < keys.Length; k++)
            {
                keys[k] = System.Text.Encoding.ASCII.GetBytes($"k{k:D2}");
                hashes[k] = CacheHashing.Hash(keys[k]);
                drained.Set(keys[k], hashes[k], default, default, 0, CacheStore.Never, CacheStore.Never, 0, 0, ref counters);
                reference.Set(keys[k], hashes[k], default, default, 0, CacheStore.Never, CacheStore.Never, 0, 0, ref counters);
            }
            var random = new Random(31);
            int pending = 0, drains = 0;
            for (int read = 0; read < 5_000; read++)
            {
                int k = Math.Min(random.Next(keys.Length), random.Next(keys.Length));
                byte* entry = drained.Find(keys[k], hashes[k], out _);
                Assert.True(entry != null, $"key {k} was not found");
                drained.Touch(entry, null, 0);
                reference.Increment(hashes[k]);
                if (++pending == 32 || random.Next(8) == 0)
                {
                    drained.Drain();
                    drains++;
                    pending = 0;
                }
            }
            drained.Drain();
            Assert.True(drains > 100, $"only {drains} drains");
            int saturated = 0;
            for (int k = 0; k < keys.Length; k++)
            {
                for (int row = 0; row < 4; row++) Assert.Equal(reference.Counter(hashes[k], row), drained.Counter(hashes[k], row));
                if (reference.Frequency(hashes[k]) == 15) saturated++;
            }
            // Without aging the hottest keys (hundreds of reads each) would all sit at 15; aging keeps most below it.
            Assert.True(saturated < keys.Length / 2, $"{saturated} of {keys.Length} keys saturated: the reads did not age the sketch");
        }
        finally
        {
            drained.Free();
            reference.Free();
        }
    }

    [Fact]
    public void The_whole_block_increment_raises_the_same_counters_as_the_word_by_word_one()
    {
        // The vector increment (AVX2) must make the sketch the scalar rule makes, word for word: 40,000 increments of 300
        // random keys on the smallest sketch, so keys share words and counters and every combination of word bits and
        // nibbles occurs; one key takes half the increments, so it saturates at 15 between agings.
        if (!System.Runtime.Intrinsics.X86.Avx2.IsSupported) return; // the scalar rule is the only one there
        var layout = new CacheLayout(NativeCache.MinimumMaxBytes);
        var scalar = new CacheStore(layout);
        var vector = new CacheStore(layout);
        try
        {
            var random = new Random(37);
            var keys = new ulong[300];
            for (int k = 0; k < keys.Length; k++) keys[k] = (ulong)random.NextInt64() | 1;
            int saturated = 0;
            for (int i = 0; i < 40_000; i++)
            {
                ulong hash = keys[random.Next(2) == 0 ? 0 : random.Next(keys.Length)];
                if (scalar.Frequency(hash) == 15) saturated++;
                Assert.True(scalar.IncrementWith(hash, vector: false));
                Assert.True(vector.IncrementWith(hash, vector: true));
                Assert.True(scalar.SketchWords.SequenceEqual(vector.SketchWords), $"the sketches differ after increment {i} of {hash:X16}");
            }
            Assert.True(saturated > 100, $"only {saturated} increments met a saturated key: the case went untested");
            Assert.Contains(scalar.SketchWords.ToArray(), word => word != 0);
        }
        finally
        {
            scalar.Free();
            vector.Free();
        }
    }

    [Fact]
    public void An_increment_raises_exactly_the_counters_at_the_estimate_and_none_once_saturated()
    {
        // A reference of the rule, checked on every increment: the smallest sketch (16 words) and eight keys counted 150
        // times in random order (fewer samples than the 160 that age it), so keys share counters and some saturate at 15.
        var layout = new CacheLayout(NativeCache.MinimumMaxBytes);
        var store = new CacheStore(layout);
        try
        {
            var random = new Random(29);
            var keys = new ulong[8];
            for (int k = 0; k < keys.Length; k++) keys[k] = (ulong)random.NextInt64() | 1;
            int saturated = 0, partial = 0;
            for (int i = 0; i < 150; i++)
            {
                ulong hash = keys[random.Next(keys.Length)];
                var before = new int[4];
                for (int row = 0; row < 4; row++) before[row] = store.Counter(hash, row);
                int estimate = before.Min();
                store.Increment(hash);
                if (estimate == 15) saturated++;
                if (before.Any(c => c != estimate)) partial++;
                for (int row = 0; row < 4; row++)
                {
                    int expected = estimate < 15 && before[row] == estimate ? estimate + 1 : before[row];
                    Assert.Equal(expected, store.Counter(hash, row));
                }
                Assert.Equal(Math.Min(estimate + 1, 15), store.Frequency(hash));
            }
            Assert.True(saturated > 0, "no increment met a saturated key: the case went untested");
            Assert.True(partial > 0, "no increment met counters above the estimate: the conservative case went untested");
        }
        finally
        {
            store.Free();
        }
    }

    [Fact]
    public void The_sketch_counts_by_conservative_update_raising_only_a_keys_least_counters()
    {
        // The smallest budget's sketch (two blocks of counters). Key A is counted five times (all its counters at 5); key B,
        // found among random hashes, is estimated at 0 yet shares one of A's counters. Counting B raises only
        // its counters at its estimate (0): the counter it shares with A stays at 5, so A's neighbours are not inflated.
        var layout = new CacheLayout(NativeCache.MinimumMaxBytes);
        var store = new CacheStore(layout);
        try
        {
            const ulong a = 0x0123456789ABCDEFUL;
            for (int i = 0; i < 5; i++) store.Increment(a);
            Assert.Equal(5, store.Frequency(a));
            var random = new Random(17);
            ulong b = 0;
            int shared = -1;
            for (int attempt = 0; attempt < 1_000_000 && shared < 0; attempt++)
            {
                b = (ulong)random.NextInt64() | 1;
                if (store.Frequency(b) != 0) continue;
                for (int row = 0; row < 4; row++) if (store.Counter(b, row) == 5) shared = row;
            }
            Assert.True(shared >= 0, "no hash found that shares a counter with A and not all of them");
            store.Increment(b);
            Assert.Equal(1, store.Frequency(b));
            Assert.Equal(5, store.Counter(b, shared));
            Assert.Equal(5, store.Frequency(a));
            for (int row = 0; row < 4; row++) Assert.Equal(5, store.Counter(a, row));
        }
        finally
        {
            store.Free();
        }
    }
}
