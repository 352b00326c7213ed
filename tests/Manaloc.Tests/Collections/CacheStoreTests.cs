using System.Numerics;
using System.Text;
using Manaloc.Collections;

namespace Manaloc.Tests.Collections;

/// <summary>The cache store's layout below <see cref="NativeCache"/>'s contracts.</summary>
public sealed unsafe class CacheStoreTests
{
    /// <summary>Every live entry's contiguity mark (readers prefetch a marked entry's chunks as one run) matches its
    /// chain, while fresh blocks are cut and then while evictions recycle chunks; and its value reads back whole.</summary>
    [Fact]
    public void An_entry_is_marked_contiguous_exactly_when_its_chunks_are_consecutive_and_reads_back_whole()
    {
        var store = new CacheStore(new CacheLayout(64 * 1024));
        try
        {
            var random = new Random(58);
            var live = new Dictionary<int, byte[]>();
            var counters = new CacheCounters();
            int marked = 0, unmarked = 0;
            for (int round = 0; round < 4_000; round++)
            {
                int key = random.Next(0, 600);
                var value = new byte[random.Next(0, 700)];
                random.NextBytes(value);
                byte[] keyBytes = Encoding.UTF8.GetBytes($"key-{key}");
                store.Set(keyBytes, CacheHashing.Hash(keyBytes), value, default, value.Length, CacheStore.Never, CacheStore.Never, 0, 0, ref counters);
                live[key] = value;
                if (round % 500 != 499) continue;
                foreach (var (k, expected) in live)
                {
                    byte[] bytes = Encoding.UTF8.GetBytes($"key-{k}");
                    byte* entry = store.Find(bytes, CacheHashing.Hash(bytes), out _);
                    if (entry == null) continue; // evicted
                    bool consecutive = store.ChunksAreConsecutive(entry);
                    Assert.Equal(consecutive, CacheStore.IsMarkedContiguous(entry));
                    // The mark is the chunk count a reader prefetches (capped), which must cover the entry up to the cap.
                    Assert.Equal(consecutive ? (int)Math.Min(CacheStore.ChunksFor(bytes.Length, expected.Length), CacheStore.MarkedChunkLimit) : 0,
                        CacheStore.MarkedPrefetchChunks(entry));
                    if (consecutive) marked++;
                    else unmarked++;
                    var copy = new byte[CacheStore.ValueLength(entry)];
                    store.CopyValue(entry, copy);
                    Assert.Equal(expected, copy);
                }
            }
            Assert.True(counters.Evictions > 1_000, $"{counters.Evictions} evictions: the chunks were not recycled");
            Assert.True(marked > 20 && unmarked > 20, $"{marked} marked, {unmarked} unmarked: both kinds should occur");
        }
        finally
        {
            store.Free();
        }
    }

    /// <summary>Once replacements have recycled the space many times over (the budget holds every key: no eviction),
    /// entries are still cut from runs of consecutive chunks (a reader prefetches and copies those by address; a chained
    /// entry costs a dependent miss per chunk): most live entries are contiguous, all read back whole, and the free
    /// runs, walked, hold exactly the free chunks the store counts, each on its length's list and within its block.</summary>
    [Fact]
    public void Recycled_space_keeps_entries_contiguous_and_the_free_runs_counted()
    {
        var (contiguous, found, evictions) = Churn(1 << 20, keys: 1_000, rounds: 40_000, seed: 77);
        Assert.Equal(0, evictions);
        Assert.Equal(1_000, found);
        // Runs keep about 80% contiguous here (95% with a larger budget, whose reclaim batches are larger); a single free list of
        // chunks left nearly every recycled entry chained (1.4% contiguous in a 10,000-entry cache of the lab's sizes).
        Assert.True(contiguous >= found * 3 / 4, $"{contiguous} of {found} live entries contiguous after recycling");
    }

    /// <summary>Under constant eviction (a working set several times the budget) the free runs stay counted and within
    /// their blocks, and every live entry, contiguous or chained, reads back whole.</summary>
    [Fact]
    public void Under_eviction_the_free_runs_stay_counted_and_entries_read_back_whole()
    {
        var (_, found, evictions) = Churn(256 * 1024, keys: 1_500, rounds: 40_000, seed: 78);
        Assert.True(evictions > 10_000, $"{evictions} evictions: the space was not recycled");
        Assert.True(found > 200, $"{found} entries found");
    }

    /// <summary>Sets random keys of <paramref name="keys"/> to values of the lab's sizes (64 to 512 bytes, one in twenty
    /// larger), checking the free-run count as it goes; then reads every live entry back and checks its mark.</summary>
    private static (int Contiguous, int Found, long Evictions) Churn(long maxBytes, int keys, int rounds, int seed)
    {
        var store = new CacheStore(new CacheLayout(maxBytes));
        try
        {
            var random = new Random(seed);
            var live = new Dictionary<int, byte[]>();
            var counters = new CacheCounters();
            for (int round = 0; round < rounds; round++)
            {
                int key = random.Next(0, keys);
                var value = new byte[random.Next(0, 20) == 0 ? random.Next(600, 1_000) : random.Next(64, 513)];
                random.NextBytes(value);
                byte[] keyBytes = KeyBytes(key);
                store.Set(keyBytes, CacheHashing.Hash(keyBytes), value, default, value.Length, CacheStore.Never, CacheStore.Never, 0, 0, ref counters);
                live[key] = value;
                if (round % 2_000 == 1_999) Assert.Equal(store.FreeRunChunksCounted, store.CountFreeRunChunks());
            }
            int contiguous = 0, found = 0;
            foreach (var (k, expected) in live)
            {
                byte[] bytes = KeyBytes(k);
                byte* entry = store.Find(bytes, CacheHashing.Hash(bytes), out _);
                if (entry == null) continue; // evicted
                found++;
                Assert.Equal(store.ChunksAreConsecutive(entry), CacheStore.IsMarkedContiguous(entry));
                if (CacheStore.IsMarkedContiguous(entry)) contiguous++;
                var copy = new byte[CacheStore.ValueLength(entry)];
                store.CopyValue(entry, copy);
                Assert.Equal(expected, copy);
            }
            return (contiguous, found, counters.Evictions);
        }
        finally
        {
            store.Free();
        }
    }

    /// <summary>A random key of <paramref name="keyLength"/> bytes (its first and last bytes the two lengths, so no two
    /// lengths share a key) and a random value of <paramref name="valueLength"/> bytes.</summary>
    private static (byte[] Key, byte[] Value) RandomEntry(Random random, int keyLength, int valueLength)
    {
        byte[] key = new byte[keyLength];
        random.NextBytes(key);
        key[0] = (byte)keyLength;
        key[^1] = (byte)valueLength;
        var value = new byte[valueLength];
        random.NextBytes(value);
        return (key, value);
    }

    /// <summary>Sets <paramref name="key"/> to <paramref name="value"/> and returns its entry, which must be found.</summary>
    private static byte* SetAndFind(CacheStore store, byte[] key, ulong hash, byte[] value, ref CacheCounters counters)
    {
        store.Set(key, hash, value, default, value.Length, CacheStore.Never, CacheStore.Never, 0, 0, ref counters);
        byte* entry = store.Find(key, hash, out _);
        Assert.True(entry != null, $"key {key.Length} B, value {value.Length} B: not found");
        return entry;
    }

    /// <summary>The entry's value copies out byte for byte into a destination exactly as long as the value: a copy past its
    /// end would throw or show in the guard bytes after it.</summary>
    private static void AssertValueReadsBack(CacheStore store, byte* entry, byte[] value)
    {
        var copy = new byte[value.Length + 16];
        copy.AsSpan(value.Length).Fill(0xA5);
        store.CopyValue(entry, copy.AsSpan(0, value.Length));
        Assert.Equal(value, copy[..value.Length]);
        Assert.All(copy[value.Length..], b => Assert.Equal(0xA5, b));
    }

    private static byte[] KeyBytes(int key) => Encoding.UTF8.GetBytes($"key-{key}-{new string('k', key % 33)}");

    /// <summary>A contiguous entry's value is copied chunk after chunk by address (no links followed): every key length
    /// across the first chunks' boundaries and every value length across a few chunks reads back whole, byte for byte,
    /// into a destination exactly as long as the value (a copy past its end would throw or show in the guard bytes).</summary>
    /// <summary>A lookup matches a key only when every byte is equal, at every key length and in every position of a
    /// difference: the keys here share one hash (forged), so the compare of the bytes alone decides. Lengths 0 to 130 cover
    /// the short keys, each block size of the one-piece compare of a contiguous entry's second chunk (up to 64 bytes) and
    /// the chunk-by-chunk compare of longer keys.</summary>
    [Fact]
    public void A_lookup_finds_a_key_only_when_every_byte_is_equal_at_every_length_and_position()
    {
        var store = new CacheStore(new CacheLayout(256 * 1024));
        try
        {
            var random = new Random(61);
            var counters = new CacheCounters();
            int compared = 0;
            for (int length = 0; length <= 130; length++)
            {
                ulong hash = 0x5DEECE66DUL * (ulong)(length + 1);
                var key = new byte[length];
                random.NextBytes(key);
                var value = new byte[random.Next(0, 200)];
                store.Set(key, hash, value, default, value.Length, CacheStore.Never, CacheStore.Never, 0, 0, ref counters);
                Assert.True(store.Find(key, hash, out _) != null, $"the key of {length} bytes was not found");
                var other = (byte[])key.Clone();
                for (int position = 0; position < length; position++)
                {
                    foreach (byte flip in (ReadOnlySpan<byte>)[0x01, 0x80])
                    {
                        other[position] ^= flip;
                        Assert.True(store.Find(other, hash, out _) == null, $"a key of {length} bytes differing at byte {position} (xor {flip:X2}) matched");
                        other[position] ^= flip;
                        compared++;
                    }
                }
                Assert.True(store.Find(other, hash, out _) != null, $"the key of {length} bytes, restored, was not found");
            }
            Assert.Equal(2 * (130 * 131 / 2), compared);
        }
        finally
        {
            store.Free();
        }
    }

    [Fact]
    public void A_contiguous_entry_reads_back_whole_at_every_key_and_value_length()
    {
        var store = new CacheStore(new CacheLayout(4 * 1024 * 1024));
        try
        {
            var random = new Random(61);
            var counters = new CacheCounters();
            int checkedEntries = 0, marked = 0;
            for (int keyLength = 1; keyLength <= 130; keyLength += 3)
            {
                for (int valueLength = 0; valueLength <= 250; valueLength += 7)
                {
                    var (key, value) = RandomEntry(random, keyLength, valueLength);
                    ulong hash = CacheHashing.Hash(key);
                    byte* entry = SetAndFind(store, key, hash, value, ref counters);
                    // An entry cut across two blocks (the first block's leftover chunks go to the free list) is not.
                    if (CacheStore.IsMarkedContiguous(entry)) marked++;
                    AssertValueReadsBack(store, entry, value);
                    checkedEntries++;
                }
            }
            Assert.Equal(0, counters.Evictions);
            Assert.True(checkedEntries > 1_000);
            Assert.True(marked > checkedEntries * 9 / 10, $"{marked} of {checkedEntries} marked contiguous: the fast copy was hardly exercised");
        }
        finally
        {
            store.Free();
        }
    }

    /// <summary>An entry chained across scattered one-chunk runs is written chunk by chunk through its links (whole payloads
    /// as fixed-size copies): every key length across the first chunks' boundaries and every value length across a few
    /// chunks reads back whole, by its key and byte for byte, as a contiguous entry does (the test above).</summary>
    [Fact]
    public void A_chained_entry_reads_back_whole_at_every_key_and_value_length()
    {
        var store = new CacheStore(new CacheLayout(64 * 1024));
        try
        {
            var counters = new CacheCounters();
            // Fill the space with one-chunk entries (a 4-byte key, no value) until eviction starts, then remove every other
            // one: the free space is runs of one chunk, so a longer entry is chained across them.
            int fillers = 0;
            while (counters.Evictions == 0)
            {
                byte[] filler = BitConverter.GetBytes(fillers++);
                store.Set(filler, CacheHashing.Hash(filler), default, default, 0, CacheStore.Never, CacheStore.Never, 0, 0, ref counters);
            }
            for (int i = 0; i < fillers; i += 2)
            {
                byte[] filler = BitConverter.GetBytes(i);
                store.Remove(filler, CacheHashing.Hash(filler), 0);
            }
            var random = new Random(62);
            int checkedEntries = 0, chained = 0;
            for (int keyLength = 5; keyLength <= 130; keyLength += 3)
            {
                for (int valueLength = 0; valueLength <= 250; valueLength += 7)
                {
                    var (key, value) = RandomEntry(random, keyLength, valueLength);
                    ulong hash = CacheHashing.Hash(key);
                    byte* entry = SetAndFind(store, key, hash, value, ref counters);
                    if (!CacheStore.IsMarkedContiguous(entry)) chained++;
                    Assert.Equal(store.ChunksAreConsecutive(entry), CacheStore.IsMarkedContiguous(entry));
                    AssertValueReadsBack(store, entry, value);
                    // Removed again, its scattered chunks go back as one-chunk runs for the next entry.
                    Assert.Equal(1, store.Remove(key, hash, 0));
                    checkedEntries++;
                }
            }
            Assert.Equal(store.FreeRunChunksCounted, store.CountFreeRunChunks());
            Assert.True(checkedEntries > 1_000);
            Assert.True(chained > checkedEntries * 3 / 4, $"{chained} of {checkedEntries} chained: the chained write was hardly exercised");
        }
        finally
        {
            store.Free();
        }
    }

    /// <summary>Replacing values in a cache with room to spare reclaims the retired chunks as they pile up, not only once
    /// the free chunks run out: the retired chunks never pass the eager threshold by more than one entry's, the replaced
    /// values' space is reused (the blocks stay near the live entries' chunks instead of growing to the budget), nothing
    /// is evicted, and the free runs stay counted.</summary>
    [Fact]
    public void Replacements_reclaim_retired_chunks_as_they_pile_up_and_reuse_them()
    {
        long maxBytes = 64L << 20;
        var layout = new CacheLayout(maxBytes);
        var store = new CacheStore(layout);
        try
        {
            var random = new Random(63);
            var counters = new CacheCounters();
            const int Keys = 2_000;
            long largestEntry = CacheStore.ChunksFor(KeyBytes(Keys).Length + 32, 512);
            for (int round = 0; round < 200_000; round++)
            {
                byte[] key = KeyBytes(random.Next(0, Keys));
                var value = new byte[random.Next(64, 513)];
                store.Set(key, CacheHashing.Hash(key), value, default, value.Length, CacheStore.Never, CacheStore.Never, 0, 0, ref counters);
                Assert.True(store.RetiredChunks < store.EagerReclaimThreshold + largestEntry, $"{store.RetiredChunks} retired chunks after write {round}");
            }
            Assert.Equal(2048, store.EagerReclaimThreshold);
            Assert.Equal(0, counters.Evictions);
            Assert.Equal(Keys, store.Count);
            Assert.Equal(store.FreeRunChunksCounted, store.CountFreeRunChunks());
            // 200,000 replacements of ~6 chunks each would take 75 MiB of fresh chunks: past the budget, had the retired ones not been reused.
            long blockBytes = store.NativeBytes - layout.FixedBytes;
            long liveBytes = store.EntryBytes;
            Assert.True(blockBytes <= liveBytes * 2 + (4L << 20), $"{blockBytes} bytes of blocks for {liveBytes} bytes of entries");
        }
        finally
        {
            store.Free();
        }
    }
    /// <summary>A write finds the key's old entry (and the link to it) before it takes and writes the new entry's chunks,
    /// and stores the new entry to that link afterwards: with every key in one bucket (hashes alike in their low bits), so
    /// the old entry sits anywhere in a long chain, replacements, adds and removals at random, first with room and then
    /// under eviction, leave every key found with its last value, the chain and the policy's queues consistent
    /// (<see cref="CacheStore.CheckQueues"/>), and the free chunks counted.</summary>
    [Theory]
    [InlineData(256 * 1024, 60)]
    [InlineData(64 * 1024, 400)]
    public void Writes_to_keys_sharing_one_bucket_keep_the_chain_the_queues_and_the_values_consistent(long maxBytes, int keys)
    {
        var store = new CacheStore(new CacheLayout(maxBytes));
        try
        {
            var random = new Random(17);
            var counters = new CacheCounters();
            var last = new Dictionary<int, byte[]>();
            // The bucket is picked by the hash's low 32 bits: one value for every key; the high word (the sketch's block and
            // the first compare) differs per key.
            static ulong HashOf(int key) => ((ulong)(uint)(key * 0x9E3779B1 + 1) << 32) | 0x5A5A5A5Au;
            for (int write = 0; write < 6_000; write++)
            {
                int k = random.Next(keys);
                byte[] key = KeyBytes(k);
                if (random.Next(10) == 0)
                {
                    store.Remove(key, HashOf(k), 0);
                    last.Remove(k);
                }
                else
                {
                    var value = new byte[random.Next(0, 300)];
                    random.NextBytes(value);
                    store.Set(key, HashOf(k), value, default, value.Length, CacheStore.Never, CacheStore.Never, 0, 0, ref counters);
                    last[k] = value;
                }
                if (write % 500 == 0) Assert.Equal(store.Count, store.CheckQueues());
            }
            Assert.Equal(store.Count, store.CheckQueues());
            Assert.Equal(store.FreeRunChunksCounted, store.CountFreeRunChunks());
            int found = 0;
            foreach (var (k, value) in last)
            {
                byte* entry = store.Find(KeyBytes(k), HashOf(k), out _);
                if (entry == null) continue; // evicted
                found++;
                AssertValueReadsBack(store, entry, value);
            }
            Assert.Equal(store.Count, found);
            // The small budget evicts (the larger holds every key): both paths ran.
            if (maxBytes == 64 * 1024) Assert.True(counters.Evictions > 0, "no eviction at the small budget");
            else Assert.Equal(0, counters.Evictions);
        }
        finally
        {
            store.Free();
        }
    }

    /// <summary>The writer's scalars (stored by every write and drain) are at least 128 bytes (a line and the adjacent line
    /// the spatial prefetcher pairs with it) from every field a lookup loads: a write does not take the readers' lines.</summary>
    [Fact]
    public void The_writers_scalars_are_128_bytes_from_every_field_a_lookup_loads()
    {
        var store = new CacheStore(new CacheLayout(1 << 20));
        try
        {
            Assert.True(store.ReaderFieldsDistanceFromWriterState() >= 128, $"{store.ReaderFieldsDistanceFromWriterState()} bytes");
        }
        finally
        {
            store.Free();
        }
    }

    /// <summary>Each stripe's read-ring cursor and slots (stored by its thread on every read) have 128 bytes of the ring's
    /// array on each side that no other stripe writes and that are inside the array (so no neighbouring object shares them).</summary>
    [Fact]
    public void Each_stripes_cursor_and_slots_have_128_bytes_of_their_own_on_each_side()
    {
        var store = new CacheStore(new CacheLayout(1 << 20));
        try
        {
            var (stripes, arrayBytes) = store.ReadRingLayout();
            Assert.NotEmpty(stripes);
            for (int i = 0; i < stripes.Length; i++)
            {
                var (offset, bytes) = stripes[i];
                Assert.True(bytes >= 33 * sizeof(long), $"stripe {i} covers {bytes} bytes, less than its cursor and 32 slots");
                Assert.True(offset >= 128, $"stripe {i} starts {offset} bytes into its array");
                Assert.True(arrayBytes - (offset + bytes) >= 128, $"stripe {i} ends {arrayBytes - (offset + bytes)} bytes before its array's end");
                for (int j = 0; j < stripes.Length; j++)
                {
                    if (i == j) continue;
                    var (other, otherBytes) = stripes[j];
                    long gap = other >= offset ? other - (offset + bytes) : offset - (other + otherBytes);
                    Assert.True(gap >= 128, $"stripes {i} and {j} are {gap} bytes apart");
                }
            }
        }
        finally
        {
            store.Free();
        }
    }

    /// <summary>The index is sized for a full cache's chains: one bucket per 128 bytes of budget rounded down to a power of
    /// two, so a budget filled with entries of four chunks (256 bytes, smaller than the usual entry) has at most one entry
    /// per bucket on average; and the budget stays exact with the larger index (the index, the directory, the sketch and
    /// the blocks within it).</summary>
    [Theory]
    [InlineData(CacheLayout.MinimumMaxBytes)]
    [InlineData(64 * 1024)]
    [InlineData(3 * 1024 * 1024 + 123)]
    [InlineData(1L << 30)]
    [InlineData((1L << 30) + (1L << 29))]
    [InlineData(CacheLayout.MaximumMaxBytes)]
    public void The_index_has_a_bucket_per_128_bytes_of_budget_and_the_budget_stays_exact(long maxBytes)
    {
        var layout = new CacheLayout(maxBytes);
        Assert.True(BitOperations.IsPow2(layout.Buckets), $"{layout.Buckets} buckets");
        Assert.True(layout.Buckets * 128 <= maxBytes && maxBytes < layout.Buckets * 256, $"{layout.Buckets} buckets for {maxBytes} bytes");
        Assert.True(layout.Buckets >= layout.CapacityChunks / 4, $"{layout.Buckets} buckets for {layout.CapacityChunks} chunks");
        Assert.True(layout.MaxBlocks >= 1);
        Assert.True(layout.FixedBytes + layout.CapacityBytes <= maxBytes, $"{layout.FixedBytes} + {layout.CapacityBytes} > {maxBytes}");
    }
}
