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

    /// <summary>A contiguous entry's value is copied chunk after chunk by address (no links followed): every key length
    /// across the first chunks' boundaries and every value length across a few chunks reads back whole, byte for byte,
    /// into a destination exactly as long as the value (a copy past its end would throw or show in the guard bytes).</summary>
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
                    byte[] key = new byte[keyLength];
                    random.NextBytes(key);
                    key[0] = (byte)keyLength;
                    key[^1] = (byte)valueLength;
                    var value = new byte[valueLength];
                    random.NextBytes(value);
                    store.Set(key, CacheHashing.Hash(key), value, default, value.Length, CacheStore.Never, CacheStore.Never, 0, 0, ref counters);
                    byte* entry = store.Find(key, CacheHashing.Hash(key), out _);
                    Assert.True(entry != null, $"key {keyLength} B, value {valueLength} B: not found");
                    // An entry cut across two blocks (the first block's leftover chunks go to the free list) is not.
                    if (CacheStore.IsMarkedContiguous(entry)) marked++;
                    var copy = new byte[valueLength + 16];
                    copy.AsSpan(valueLength).Fill(0xA5);
                    store.CopyValue(entry, copy.AsSpan(0, valueLength));
                    Assert.Equal(value, copy[..valueLength]);
                    Assert.All(copy[valueLength..], b => Assert.Equal(0xA5, b));
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
}
