using System.Buffers;
using System.Diagnostics.Metrics;
using System.Diagnostics.Tracing;
using System.Runtime.CompilerServices;
using System.Text;
using Manaloc.Collections;
using Manaloc.Diagnostics;
using Microsoft.Extensions.Time.Testing;

namespace Manaloc.Tests.Collections;

// One collection with ReadTalliesTests: their threads register reader slots, and a registration makes the next reclaim
// rebuild the slot snapshot (an allocation this class's zero-allocation test would count).
[Collection(nameof(NativeCacheTests))]
public sealed class NativeCacheTests
{
    private static NativeCache NewCache(long maxBytes = 1 << 20, TimeProvider? clock = null, long maxEntryBytes = 0, string? name = null)
        => new(new NativeCacheOptions { MaxBytes = maxBytes, TimeProvider = clock ?? TimeProvider.System, MaxEntryBytes = maxEntryBytes, Name = name });

    private static byte[] Value(int length, int seed)
    {
        var v = new byte[length];
        new Random(seed).NextBytes(v);
        return v;
    }

    private static byte[]? Get(NativeCache cache, ReadOnlySpan<byte> key)
    {
        var writer = new ArrayBufferWriter<byte>();
        return cache.TryGet(key, writer) ? writer.WrittenSpan.ToArray() : null;
    }

    private static byte[]? Get(NativeCache cache, string key)
    {
        var writer = new ArrayBufferWriter<byte>();
        return cache.TryGet(key, writer) ? writer.WrittenSpan.ToArray() : null;
    }

    [Fact]
    public void Set_then_TryGet_returns_the_bytes_for_keys_and_values_of_every_length_across_chunk_boundaries()
    {
        using var cache = NewCache(4 << 20, maxEntryBytes: 64 * 1024);
        int[] lengths = [0, 1, 3, 4, 5, 59, 60, 63, 64, 65, 119, 120, 121, 500, 4096];
        foreach (int k in lengths)
        {
            for (int j = 0; j < lengths.Length; j++)
            {
                int v = lengths[j];
                byte[] key = Value(k, k * 7919 + v);
                if (k > 0) key[0] = (byte)j; // distinct keys for distinct value lengths
                byte[] value = Value(v, k + v);
                Assert.True(cache.Set(key, value));
                Assert.Equal(value, Get(cache, key));
            }
        }
        Assert.Equal(lengths.Length * (lengths.Length - 1) + 1, cache.Count); // the empty key was set once per value length
    }

    [Fact]
    public void A_hit_appends_to_the_writer_and_a_miss_writes_nothing()
    {
        using var cache = NewCache();
        cache.Set("k"u8, [1, 2, 3]);
        var writer = new ArrayBufferWriter<byte>();
        writer.Write(new byte[] { 9 });
        Assert.True(cache.TryGet("k"u8, writer));
        Assert.Equal(new byte[] { 9, 1, 2, 3 }, writer.WrittenSpan.ToArray());
        Assert.False(cache.TryGet("absent"u8, writer));
        Assert.Equal(4, writer.WrittenCount);
        var stats = cache.GetStatistics();
        Assert.Equal(1, stats.Hits);
        Assert.Equal(1, stats.Misses);
    }

    [Fact]
    public void A_value_larger_than_the_writers_first_span_is_read_whole()
    {
        using var cache = NewCache();
        byte[] value = Value(3000, 1);
        cache.Set("big"u8, value);
        var writer = new ArrayBufferWriter<byte>(1); // first span far smaller than the value
        Assert.True(cache.TryGet("big"u8, writer));
        Assert.Equal(value, writer.WrittenSpan.ToArray());
        Assert.Equal(1, cache.GetStatistics().Hits);
    }

    [Fact]
    public void A_writer_whose_span_stays_smaller_than_asked_for_is_refused_naming_it_not_asked_forever()
    {
        using var cache = NewCache(name: "stingy");
        cache.Set("big"u8, Value(3000, 1));
        var writer = new StingyWriter(16);
        var error = Assert.Throws<ArgumentException>(() => cache.TryGet("big"u8, writer));
        Assert.Equal("destination", error.ParamName);
        Assert.Contains("NativeCache 'stingy'", error.Message);
        Assert.Contains("StingyWriter", error.Message);
        Assert.Contains("span of 16 bytes from GetSpan(3000)", error.Message);
        Assert.Equal(2, writer.GetSpanCalls); // the first span, then one ask for the value's length
        Assert.Equal(0, writer.Advanced);
        Assert.Throws<ArgumentException>(() => cache.TryGet("big", writer)); // char keys take the same path
        // A value that fits the small span is still read, and the cache is unharmed.
        cache.Set("small"u8, [1, 2, 3]);
        Assert.True(cache.TryGet("small"u8, writer));
        Assert.Equal(3, writer.Advanced);
        Assert.Equal(Value(3000, 1), Get(cache, "big"u8));
    }

    /// <summary>A writer that breaks <see cref="IBufferWriter{T}.GetSpan"/>'s contract: its span is never larger than
    /// <paramref name="capacity"/>, whatever the size hint. It stops a caller that would ask it forever.</summary>
    private sealed class StingyWriter(int capacity) : IBufferWriter<byte>
    {
        private readonly byte[] _buffer = new byte[capacity];
        public int GetSpanCalls { get; private set; }
        public int Advanced { get; private set; }
        public void Advance(int count) => Advanced += count;
        public Memory<byte> GetMemory(int sizeHint = 0)
        {
            if (++GetSpanCalls > 100) throw new InvalidOperationException("GetSpan was asked 100 times for one read.");
            return _buffer;
        }
        public Span<byte> GetSpan(int sizeHint = 0) => GetMemory(sizeHint).Span;
    }

    [Fact]
    public void Char_keys_are_their_UTF_8_bytes_without_a_string()
    {
        using var cache = NewCache();
        Assert.True(cache.Set("clé-日本", [1]));
        Assert.Equal(new byte[] { 1 }, Get(cache, Encoding.UTF8.GetBytes("clé-日本")));
        Assert.True(cache.Set(Encoding.UTF8.GetBytes("clé-日本"), [2]));
        Assert.Equal(new byte[] { 2 }, Get(cache, "clé-日本"));
        string longKey = new('x', 5000); // above the stack buffer: a rented one
        Assert.True(cache.Set(longKey, [3]));
        Assert.Equal(new byte[] { 3 }, Get(cache, longKey));
        Assert.True(cache.Refresh(longKey));
        Assert.True(cache.Remove(longKey));
        Assert.Null(Get(cache, longKey));
    }

    [Fact]
    public void A_char_key_is_the_entry_of_its_UTF_8_bytes_on_every_route_of_the_read_and_the_write()
    {
        // The read narrows and hashes an ASCII key of 8 to 256 chars in one pass and encodes every other key in full: each
        // route must reach the entry the byte key stored, and none may reach another's (keys one char apart at each end).
        using var cache = NewCache(4 << 20);
        var keys = new List<string>();
        foreach (int length in (int[])[0, 1, 7, 8, 9, 15, 16, 17, 31, 48, 63, 64, 65, 255, 256, 257, 300])
        {
            string ascii = string.Concat(Enumerable.Range(0, length).Select(i => (char)('!' + (i * 7 % 90))));
            keys.Add(ascii);
            if (length == 0) continue;
            keys.Add(ascii[..^1] + "\u007F");
            keys.Add("\u00E9" + ascii[1..]);
            keys.Add(ascii[..^1] + "\u00FF");
            keys.Add(ascii[..^1] + "\u0100");
            keys.Add(ascii[..^1] + "\uD800");
        }
        for (int i = 0; i < keys.Count; i++) Assert.True(cache.Set(Wtf8(keys[i]), [(byte)i, (byte)(i >> 8)]));
        Assert.Equal(keys.Distinct().Count(), cache.Count);
        for (int i = 0; i < keys.Count; i++)
        {
            int expected = keys.LastIndexOf(keys[i]); // the last Set of a key repeated wins
            Assert.Equal(new byte[] { (byte)expected, (byte)(expected >> 8) }, Get(cache, keys[i]));
        }
        Assert.Null(Get(cache, new string('!', 40)));
        // And the other way round: a Set by the char key replaces the entry of its bytes, on every route of the write.
        for (int i = 0; i < keys.Count; i++) Assert.True(cache.Set(keys[i], [(byte)i, (byte)(i >> 8), 1]));
        Assert.Equal(keys.Distinct().Count(), cache.Count);
        for (int i = 0; i < keys.Count; i++)
        {
            int expected = keys.LastIndexOf(keys[i]);
            Assert.Equal(new byte[] { (byte)expected, (byte)(expected >> 8), 1 }, Get(cache, Wtf8(keys[i])));
        }
    }

    /// <summary>A key's bytes as the cache stores a lone surrogate: its 3-byte generalized UTF-8 form (WTF-8).</summary>
    private static byte[] Wtf8(string key)
    {
        var bytes = new List<byte>();
        foreach (char c in key)
        {
            if (char.IsSurrogate(c)) bytes.AddRange([(byte)(0xE0 | (c >> 12)), (byte)(0x80 | ((c >> 6) & 0x3F)), (byte)(0x80 | (c & 0x3F))]);
            else bytes.AddRange(Encoding.UTF8.GetBytes(c.ToString()));
        }
        return [.. bytes];
    }

    [Fact]
    public void Keys_with_lone_surrogates_are_keys_and_differ_by_which_surrogate_they_hold()
    {
        using var cache = NewCache();
        string[] keys = ["ab\uD800", "ab\uD801", "ab\uDC00", "ab\uFFFD", "ab", "\uDC00\uD800", new string('k', 200) + "\uDBFF"];
        for (int i = 0; i < keys.Length; i++) Assert.True(cache.Set(keys[i], [(byte)i]));
        Assert.Equal(keys.Length, cache.Count);
        for (int i = 0; i < keys.Length; i++) Assert.Equal(new byte[] { (byte)i }, Get(cache, keys[i]));
        Assert.Equal(new byte[] { 0 }, Get(cache, [(byte)'a', (byte)'b', 0xED, 0xA0, 0x80])); // stored as its generalized UTF-8 (WTF-8) bytes
        Assert.True(cache.Refresh("ab\uD801"));
        Assert.True(cache.Remove("ab\uD801"));
        Assert.Null(Get(cache, "ab\uD801"));
        Assert.Equal(new byte[] { 0 }, Get(cache, "ab\uD800"));
        Assert.Equal(keys.Length - 1, cache.Count);
    }

    [Fact]
    public void Set_replaces_and_Remove_removes()
    {
        using var cache = NewCache();
        Assert.True(cache.Set("k"u8, [1]));
        Assert.True(cache.Set("k"u8, Value(700, 2)));
        Assert.Equal(Value(700, 2), Get(cache, "k"u8));
        Assert.Equal(1, cache.Count);
        Assert.Equal(NativeCache.EntrySize(1, 700), cache.GetStatistics().EntryBytes);
        Assert.True(cache.Remove("k"u8));
        Assert.False(cache.Remove("k"u8));
        Assert.Null(Get(cache, "k"u8));
        Assert.Equal(0, cache.Count);
        Assert.Equal(0, cache.GetStatistics().EntryBytes);
    }

    [Fact]
    public void A_multi_segment_value_is_stored_whole()
    {
        using var cache = NewCache();
        var first = new Segment(Value(50, 1), 0);
        var last = first.Append(Value(100, 2)).Append(Value(7, 3));
        var sequence = new ReadOnlySequence<byte>(first, 0, last, last.Memory.Length);
        Assert.True(cache.Set("seq", sequence, default));
        Assert.Equal(sequence.ToArray(), Get(cache, "seq"));
    }

    private sealed class Segment : ReadOnlySequenceSegment<byte>
    {
        public Segment(byte[] bytes, long runningIndex)
        {
            Memory = bytes;
            RunningIndex = runningIndex;
        }

        public Segment Append(byte[] bytes)
        {
            var next = new Segment(bytes, RunningIndex + Memory.Length);
            Next = next;
            return next;
        }
    }

    [Fact]
    public void An_entry_above_MaxEntryBytes_is_refused_counted_removes_the_old_value_and_evicts_nothing()
    {
        using var cache = NewCache(64 * 1024, maxEntryBytes: 1024);
        Assert.Equal(1024, cache.MaxEntryBytes);
        for (int i = 0; i < 20; i++) Assert.True(cache.Set(BitConverter.GetBytes(i), Value(100, i)));
        Assert.True(cache.Set("k"u8, [1]));
        Assert.False(cache.Set("k"u8, Value(2000, 1)));
        Assert.Null(Get(cache, "k"u8)); // no stale old value
        var stats = cache.GetStatistics();
        Assert.Equal(1, stats.Refusals);
        Assert.Equal(0, stats.Evictions);
        Assert.Equal(20, cache.Count);
        for (int i = 0; i < 20; i++) Assert.Equal(Value(100, i), Get(cache, BitConverter.GetBytes(i)));
        // The limit is on the entry as counted: key + value + header in whole chunks.
        int fits = 4 + 15 * 60 - 1; // 16 chunks hold 4 + 15 x 60 bytes of key and value after the header; one key byte
        Assert.Equal(1024, NativeCache.EntrySize(1, fits));
        Assert.True(cache.Set("x"u8, new byte[fits]));
        Assert.False(cache.Set("x"u8, new byte[fits + 1]));
    }

    [Theory]
    [InlineData(-1, 0, "keyLength")]
    [InlineData(0, -1, "valueLength")]
    [InlineData(int.MinValue, 5, "keyLength")]
    public void EntrySize_refuses_a_negative_length_naming_it(int keyLength, int valueLength, string name)
    {
        var refused = Assert.Throws<ArgumentOutOfRangeException>(() => NativeCache.EntrySize(keyLength, valueLength));
        Assert.Equal(name, refused.ParamName);
    }

    [Fact]
    public void The_default_MaxEntryBytes_is_a_sixteenth_of_the_space_for_entries()
    {
        using var cache = NewCache(1 << 20);
        Assert.InRange(cache.MaxEntryBytes, (1 << 20) / 20, (1 << 20) / 16);
    }

    [Fact]
    public void The_byte_budget_holds_while_filling_far_beyond_it_and_evictions_make_room()
    {
        const long budget = 256 * 1024;
        using var cache = NewCache(budget);
        var random = new Random(5);
        for (int i = 0; i < 20_000; i++)
        {
            Assert.True(cache.Set(BitConverter.GetBytes(i), Value(random.Next(0, 600), i)));
            var s = cache.GetStatistics();
            Assert.True(s.Bytes <= budget, $"{s.Bytes} bytes above the budget of {budget}");
            Assert.True(s.EntryBytes <= s.Bytes);
        }
        var stats = cache.GetStatistics();
        Assert.True(stats.Evictions > 10_000, $"{stats.Evictions} evictions");
        Assert.Equal(20_000, stats.Evictions + stats.Entries);
        Assert.True(stats.EntryBytes > budget * 8 / 10, $"{stats.EntryBytes} of {budget} bytes hold entries");
        long held = 0;
        random = new Random(5);
        for (int i = 0; i < 20_000; i++)
        {
            int length = random.Next(0, 600);
            if (Get(cache, BitConverter.GetBytes(i)) is { } v)
            {
                Assert.Equal(Value(length, i), v);
                held += NativeCache.EntrySize(4, length);
            }
        }
        Assert.Equal(stats.EntryBytes, held);
    }

    [Fact]
    public void Entries_read_often_survive_a_one_pass_scan()
    {
        using var cache = NewCache(64 * 1024);
        for (int i = 0; i < 100; i++) cache.Set(BitConverter.GetBytes(i), new byte[100]);
        var writer = new ArrayBufferWriter<byte>();
        for (int i = 0; i < 100; i++) Assert.True(cache.TryGet(BitConverter.GetBytes(i), writer));
        for (int i = 1000; i < 1300; i++) cache.Set(BitConverter.GetBytes(i), new byte[100]); // the scan: 3x what fits
        int survivors = 0;
        for (int i = 0; i < 100; i++) survivors += cache.TryGet(BitConverter.GetBytes(i), writer) ? 1 : 0;
        Assert.True(survivors >= 90, $"{survivors} of 100 hot entries survived");
    }

    [Fact]
    public void Expired_entries_are_never_returned_absolute_relative_and_sliding()
    {
        var clock = new FakeTimeProvider(new DateTimeOffset(2030, 1, 1, 0, 0, 0, TimeSpan.Zero));
        using var cache = NewCache(clock: clock);
        Assert.True(cache.Set("ttl"u8, [1], TimeSpan.FromSeconds(10)));
        Assert.True(cache.Set("abs"u8, [2], new NativeCacheEntryOptions { AbsoluteExpiration = clock.GetUtcNow().AddSeconds(20) }));
        Assert.True(cache.Set("slide"u8, [3], new NativeCacheEntryOptions { SlidingExpiration = TimeSpan.FromSeconds(5) }));
        Assert.True(cache.Set("capped"u8, [4], new NativeCacheEntryOptions { SlidingExpiration = TimeSpan.FromSeconds(5), TimeToLive = TimeSpan.FromSeconds(12) }));
        clock.Advance(TimeSpan.FromSeconds(4));
        Assert.NotNull(Get(cache, "slide"u8)); // slides to 9 s
        Assert.True(cache.Refresh("capped"u8)); // slides to 9 s
        clock.Advance(TimeSpan.FromSeconds(4)); // 8 s
        Assert.NotNull(Get(cache, "slide"u8)); // slides to 13 s
        Assert.True(cache.Refresh("capped"u8)); // would slide to 13 s, capped at 12
        clock.Advance(TimeSpan.FromSeconds(2) - TimeSpan.FromTicks(1)); // just before 10 s
        Assert.Equal(new byte[] { 1 }, Get(cache, "ttl"u8));
        clock.Advance(TimeSpan.FromTicks(1)); // 10 s
        Assert.Null(Get(cache, "ttl"u8));
        Assert.False(cache.Refresh("ttl"u8));
        clock.Advance(TimeSpan.FromSeconds(2)); // 12 s
        Assert.Null(Get(cache, "capped"u8));
        Assert.NotNull(Get(cache, "slide"u8)); // slides to 17 s
        Assert.NotNull(Get(cache, "abs"u8));
        clock.Advance(TimeSpan.FromSeconds(8)); // 20 s
        Assert.Null(Get(cache, "abs"u8));
        Assert.Null(Get(cache, "slide"u8));
        // Removing an expired entry counts an expiration and answers false.
        Assert.False(cache.Remove("abs"u8));
        Assert.Equal(1, cache.GetStatistics().Expirations);
    }

    [Fact]
    public void An_already_expired_entry_is_refused_and_removes_the_old_value()
    {
        var clock = new FakeTimeProvider(new DateTimeOffset(2030, 1, 1, 0, 0, 0, TimeSpan.Zero));
        using var cache = NewCache(clock: clock);
        cache.Set("k"u8, [1]);
        Assert.False(cache.Set("k"u8, [2], TimeSpan.Zero));
        Assert.Null(Get(cache, "k"u8));
        Assert.False(cache.Set("k"u8, [2], new NativeCacheEntryOptions { AbsoluteExpiration = clock.GetUtcNow() }));
        Assert.False(cache.Set("k"u8, [2], TimeSpan.FromSeconds(-1)));
        Assert.Equal(3, cache.GetStatistics().Refusals);
        var e = Assert.Throws<ArgumentOutOfRangeException>(() => cache.Set("k"u8, [2], new NativeCacheEntryOptions { SlidingExpiration = TimeSpan.Zero }));
        Assert.Contains("SlidingExpiration", e.Message);
        Assert.True(cache.Set("k"u8, [3], TimeSpan.MaxValue)); // far future: no overflow
        clock.Advance(TimeSpan.FromDays(3650));
        Assert.Equal(new byte[] { 3 }, Get(cache, "k"u8));
    }

    [Fact]
    public void Eviction_removes_expired_entries_first_and_counts_them_as_expirations()
    {
        var clock = new FakeTimeProvider(new DateTimeOffset(2030, 1, 1, 0, 0, 0, TimeSpan.Zero));
        using var cache = NewCache(64 * 1024, clock: clock);
        for (int i = 0; i < 200; i++) cache.Set(BitConverter.GetBytes(i), new byte[200], TimeSpan.FromSeconds(1));
        clock.Advance(TimeSpan.FromSeconds(2));
        for (int i = 1000; i < 1400; i++) cache.Set(BitConverter.GetBytes(i), new byte[200]);
        var stats = cache.GetStatistics();
        Assert.True(stats.Expirations >= 150, $"{stats.Expirations} expirations, {stats.Evictions} evictions");
    }

    /// <summary>A write without expiry to a cache with room reads no clock (it neither expires nor evicts); one whose
    /// room must come from eviction though the cache was below its budget when it started (its caller left the clock
    /// unread) reads it then, so eviction still removes the expired entries first and counts them as expirations.</summary>
    [Fact]
    public void A_write_without_expiry_reads_the_clock_only_when_it_evicts()
    {
        var clock = new CountingClock(new FakeTimeProvider(new DateTimeOffset(2030, 1, 1, 0, 0, 0, TimeSpan.Zero)));
        using var cache = NewCache(64 * 1024, clock, maxEntryBytes: 32 * 1024);
        for (int i = 0; i < 20; i++) cache.Set(BitConverter.GetBytes(i), new byte[200]);
        Assert.Equal(0, clock.Reads);
        for (int i = 100; i < 180; i++) cache.Set(BitConverter.GetBytes(i), new byte[200], TimeSpan.FromSeconds(1));
        Assert.Equal(80, clock.Reads);
        long bytesBefore = cache.GetStatistics().Bytes;
        clock.Inner.Advance(TimeSpan.FromSeconds(2));
        // Some 500 chunks: more than the blocks the budget has left, so this write evicts; the expired entries go first.
        Assert.True(cache.Set("large"u8, new byte[29_000]));
        var stats = cache.GetStatistics();
        Assert.True(stats.Bytes > bytesBefore, "the write took the budget's last blocks before it evicted");
        Assert.True(clock.Reads > 80, "the write that evicted read the clock");
        Assert.True(stats.Expirations > 0, $"{stats.Expirations} expirations, {stats.Evictions} evictions");
        Assert.Equal(29_000, Get(cache, "large"u8)!.Length);
    }

    private sealed class CountingClock(FakeTimeProvider inner) : TimeProvider
    {
        public FakeTimeProvider Inner => inner;
        public int Reads { get; private set; }

        public override DateTimeOffset GetUtcNow()
        {
            Reads++;
            return inner.GetUtcNow();
        }
    }

    [Theory]
    [InlineData(8192)]
    [InlineData(1 << 20)]
    [InlineData(300L << 20)]
    public void SpaceForEntries_is_the_largest_entry_limit_the_constructor_accepts(long maxBytes)
    {
        long space = NativeCache.SpaceForEntries(maxBytes);
        Assert.InRange(space, 1, maxBytes - 1);
        using (var cache = NewCache(maxBytes, maxEntryBytes: space)) Assert.Equal(space, cache.MaxEntryBytes);
        Assert.Equal("options.MaxEntryBytes", Assert.Throws<ArgumentOutOfRangeException>(() => NewCache(maxBytes, maxEntryBytes: space + 1)).ParamName);
    }

    [Fact]
    public void SpaceForEntries_refuses_a_budget_out_of_range()
    {
        Assert.Equal("maxBytes", Assert.Throws<ArgumentOutOfRangeException>(() => NativeCache.SpaceForEntries(NativeCache.MinimumMaxBytes - 1)).ParamName);
        Assert.Equal("maxBytes", Assert.Throws<ArgumentOutOfRangeException>(() => NativeCache.SpaceForEntries(NativeCache.MaximumMaxBytes + 1)).ParamName);
    }

    [Fact]
    public void Bad_options_are_refused_naming_the_option()
    {
        Assert.Equal("options", Assert.Throws<ArgumentNullException>(() => new NativeCache(null!)).ParamName);
        Assert.Equal("options.MaxBytes", Assert.Throws<ArgumentOutOfRangeException>(() => new NativeCache(new NativeCacheOptions())).ParamName);
        var small = Assert.Throws<ArgumentOutOfRangeException>(() => NewCache(NativeCache.MinimumMaxBytes - 1));
        Assert.Contains("8192", small.Message);
        Assert.Throws<ArgumentOutOfRangeException>(() => NewCache(NativeCache.MaximumMaxBytes + 1));
        Assert.Equal("options.MaxEntryBytes", Assert.Throws<ArgumentOutOfRangeException>(() => NewCache(1 << 20, maxEntryBytes: -1)).ParamName);
        Assert.Equal("options.MaxEntryBytes", Assert.Throws<ArgumentOutOfRangeException>(() => NewCache(1 << 20, maxEntryBytes: 1 << 20)).ParamName);
        Assert.Equal("options.TimeProvider", Assert.Throws<ArgumentNullException>(() => new NativeCache(new NativeCacheOptions { MaxBytes = 1 << 20, TimeProvider = null! })).ParamName);
        using var cache = NewCache();
        Assert.Equal("destination", Assert.Throws<ArgumentNullException>(() => cache.TryGet("k"u8, null!)).ParamName);
    }

    [Theory]
    [InlineData(1)]
    [InlineData(63)]
    public void An_entry_limit_below_the_smallest_entry_is_refused_not_a_cache_that_stores_nothing(long maxEntryBytes)
    {
        // Below one chunk no entry fits: such a cache would refuse every Set, silently.
        var e = Assert.Throws<ArgumentOutOfRangeException>(() => NewCache(1 << 20, maxEntryBytes: maxEntryBytes));
        Assert.Equal("options.MaxEntryBytes", e.ParamName);
        Assert.Contains("the smallest entry", e.Message);
        using var smallest = NewCache(1 << 20, maxEntryBytes: NativeCache.EntrySize(0, 0));
        Assert.Equal(64, smallest.MaxEntryBytes);
        Assert.True(smallest.Set(""u8, ""u8));
        Assert.False(smallest.Set("k"u8, new byte[64]));
    }

    [Fact]
    public void The_smallest_budget_holds_an_entry_as_large_as_its_whole_space()
    {
        using var cache = NewCache(NativeCache.MinimumMaxBytes, maxEntryBytes: 4096);
        Assert.True(cache.GetStatistics().Bytes <= NativeCache.MinimumMaxBytes);
        int largest = 4 + 63 * 60 - 1; // 64 chunks, a 1-byte key
        Assert.True(cache.Set("a"u8, new byte[100]));
        Assert.True(cache.Set("b"u8, Value(largest, 1)));
        Assert.Equal(Value(largest, 1), Get(cache, "b"u8));
        Assert.Null(Get(cache, "a"u8));
        Assert.True(cache.Set("b"u8, Value(largest, 2))); // a replace as large as the space: the old entry is evicted first
        Assert.Equal(Value(largest, 2), Get(cache, "b"u8));
        Assert.True(cache.GetStatistics().Bytes <= NativeCache.MinimumMaxBytes);
    }

    [Fact]
    public void Every_member_throws_ObjectDisposedException_after_Dispose_and_Dispose_is_idempotent()
    {
        var cache = NewCache(name: "gone");
        cache.Set("k"u8, [1]);
        cache.Dispose();
        cache.Dispose();
        var writer = new ArrayBufferWriter<byte>();
        Assert.Contains("gone", Assert.Throws<ObjectDisposedException>(() => cache.Set("k"u8, [1])).Message);
        Assert.Throws<ObjectDisposedException>(() => cache.Set("k", [1]));
        Assert.Throws<ObjectDisposedException>(() => cache.Set("k"u8, [1], TimeSpan.FromSeconds(1)));
        Assert.Throws<ObjectDisposedException>(() => cache.Set("k", new ReadOnlySequence<byte>(new byte[] { 1 }), default));
        Assert.Throws<ObjectDisposedException>(() => cache.Set("k"u8, [200], TimeSpan.Zero)); // even a refusal
        Assert.Throws<ObjectDisposedException>(() => cache.TryGet("k"u8, writer));
        Assert.Throws<ObjectDisposedException>(() => cache.TryGet("k", writer));
        Assert.Throws<ObjectDisposedException>(() => cache.Refresh("k"u8));
        Assert.Throws<ObjectDisposedException>(() => cache.Remove("k"u8));
        Assert.Throws<ObjectDisposedException>(() => cache.Remove("k"));
        Assert.Throws<ObjectDisposedException>(() => cache.Count);
        Assert.Throws<ObjectDisposedException>(() => cache.Clear());
        Assert.Throws<ObjectDisposedException>(() => cache.GetStatistics());
        Assert.Equal("NativeCache 'gone' (disposed)", cache.ToString());
    }

    [Fact]
    public void A_large_budget_grows_in_2_MiB_huge_page_blocks_that_hold_entries_across_them()
    {
        // From 256 MiB the blocks are 2 MiB (huge pages) and the index and sketch whole 2 MiB units.
        using var cache = NewCache(256L << 20);
        long empty = cache.GetStatistics().Bytes;
        Assert.True(cache.Set("first"u8, [1]));
        Assert.Equal(empty + (2 << 20), cache.GetStatistics().Bytes);
        // 17 chunks an entry: 3,000 entries need a second block, and some chain across the two.
        for (int i = 0; i < 3000; i++) Assert.True(cache.Set(BitConverter.GetBytes(i), Value(1000, i)));
        Assert.Equal(empty + (4 << 20), cache.GetStatistics().Bytes);
        for (int i = 0; i < 3000; i++) Assert.Equal(Value(1000, i), Get(cache, BitConverter.GetBytes(i)));
        Assert.Equal(new byte[] { 1 }, Get(cache, "first"u8));
        for (int i = 0; i < 3000; i += 2) Assert.True(cache.Remove(BitConverter.GetBytes(i)));
        for (int i = 1; i < 3000; i += 2) Assert.Equal(Value(1000, i), Get(cache, BitConverter.GetBytes(i)));
        cache.Clear();
        Assert.Equal(empty, cache.GetStatistics().Bytes);
        Assert.Null(Get(cache, BitConverter.GetBytes(1)));
    }

    [Fact]
    public void Clear_removes_every_entry_and_gives_the_blocks_back()
    {
        using var cache = NewCache(1 << 20);
        long empty = cache.GetStatistics().Bytes;
        for (int i = 0; i < 1000; i++) cache.Set(BitConverter.GetBytes(i), new byte[300]);
        Assert.True(cache.GetStatistics().Bytes > empty + 300_000);
        cache.Clear();
        Assert.Equal(0, cache.Count);
        Assert.Equal(empty, cache.GetStatistics().Bytes);
        Assert.Null(Get(cache, BitConverter.GetBytes(5)));
        Assert.True(cache.Set("again"u8, [1]));
        Assert.Equal(new byte[] { 1 }, Get(cache, "again"u8));
    }

    [Fact]
    public void The_meters_report_entries_bytes_and_counters_by_name()
    {
        using var cache = NewCache(64 * 1024, maxEntryBytes: 1024, name: "metered-cache");
        for (int i = 0; i < 500; i++) cache.Set(BitConverter.GetBytes(i), new byte[100]);
        cache.Set("huge"u8, new byte[5000]);
        var writer = new ArrayBufferWriter<byte>();
        cache.TryGet(BitConverter.GetBytes(499), writer);
        cache.TryGet("absent"u8, writer);
        var seen = new Dictionary<string, long>();
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == ManalocTelemetry.MemoryMeterName && instrument.Name.StartsWith("manaloc.cache.", StringComparison.Ordinal)) l.EnableMeasurementEvents(instrument);
        };
        listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) =>
        {
            foreach (var tag in tags)
            {
                if (tag.Key == ManalocTelemetry.NameTag && (string?)tag.Value == "metered-cache") seen[instrument.Name] = value;
            }
        });
        listener.Start();
        listener.RecordObservableInstruments();
        var stats = cache.GetStatistics();
        Assert.Equal(stats.Entries, seen["manaloc.cache.entries"]);
        Assert.Equal(stats.Bytes, seen["manaloc.cache.native_bytes"]);
        Assert.Equal(1, seen["manaloc.cache.hits"]);
        Assert.Equal(1, seen["manaloc.cache.misses"]);
        Assert.Equal(1, seen["manaloc.cache.refusals"]);
        Assert.Equal(500 - stats.Entries, seen["manaloc.cache.evictions"]);
        Assert.Equal(0, seen["manaloc.cache.expirations"]);
    }

    [Fact]
    public void Caches_sharing_a_name_are_one_series_whose_figures_are_their_sums()
    {
        using var first = NewCache(64 * 1024, name: "twin-cache");
        using var second = NewCache(128 * 1024, name: "twin-cache");
        var writer = new ArrayBufferWriter<byte>();
        for (int i = 0; i < 10; i++) first.Set(BitConverter.GetBytes(i), new byte[100]);
        for (int i = 0; i < 3; i++) second.Set(BitConverter.GetBytes(i), new byte[100]);
        first.TryGet(BitConverter.GetBytes(1), writer);
        second.TryGet(BitConverter.GetBytes(1), writer);
        second.TryGet(BitConverter.GetBytes(2), writer);
        second.TryGet("absent"u8, writer);
        var seen = new Dictionary<string, List<long>>();
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == ManalocTelemetry.MemoryMeterName && instrument.Name.StartsWith("manaloc.cache.", StringComparison.Ordinal)) l.EnableMeasurementEvents(instrument);
        };
        listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) =>
        {
            foreach (var tag in tags)
            {
                if (tag.Key == ManalocTelemetry.NameTag && (string?)tag.Value == "twin-cache")
                {
                    if (!seen.TryGetValue(instrument.Name, out var values)) seen[instrument.Name] = values = [];
                    values.Add(value);
                }
            }
        });
        listener.Start();
        listener.RecordObservableInstruments();
        // One measurement per instrument for the name (a repeated tag set is one series to an exporter, which would keep one of them).
        Assert.All(seen.Values, values => Assert.Single(values));
        Assert.Equal(13, seen["manaloc.cache.entries"][0]);
        Assert.Equal(first.GetStatistics().Bytes + second.GetStatistics().Bytes, seen["manaloc.cache.native_bytes"][0]);
        Assert.Equal(3, seen["manaloc.cache.hits"][0]);
        Assert.Equal(1, seen["manaloc.cache.misses"][0]);
    }

    private sealed class LeakListener : EventListener
    {
        public readonly List<string> Leaks = [];
        protected override void OnEventSourceCreated(EventSource source)
        {
            if (source.Name == ManalocTelemetry.EventSourceName) EnableEvents(source, EventLevel.Warning);
        }
        protected override void OnEventWritten(EventWrittenEventArgs e)
        {
            if (e.EventId == 1 && e.Payload is { Count: 3 } p)
            {
                lock (Leaks) Leaks.Add($"{p[0]}|{p[1]}");
            }
        }
    }

    [Fact]
    public void A_cache_never_disposed_appears_in_the_leak_report()
    {
        using var listener = new LeakListener();
        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Forget()
        {
            var cache = NewCache(name: "forgotten-cache");
            cache.Set("a"u8, [1]);
            cache.Set("b"u8, [2]);
        }
        Forget();
        for (int i = 0; i < 3; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        lock (listener.Leaks)
        {
            Assert.Contains(listener.Leaks, l => l.StartsWith("NativeCache 'forgotten-cache', never disposed", StringComparison.Ordinal) && l.EndsWith("|2", StringComparison.Ordinal));
        }
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Readers_racing_replaces_evictions_removes_and_Clear_see_whole_values_only(bool zeros)
    {
        // Every value is its key's id and a version repeated, in a length that changes with the version: a torn or
        // reused read shows mixed bytes or a length that does not match. With zeros, the repeated byte is 0: a read
        // marks its entry by storing 1 into a header byte that is 0, so a mark landing in a chunk reused for another
        // entry's value (a reader outside the gate's protection) shows as a 1 among the zeros.
        using var cache = NewCache(128 * 1024);
        const int keys = 400;
        byte[] Versioned(int id, int version)
        {
            var v = new byte[50 + (version * 37 + id) % 400];
            for (int i = 0; i < v.Length; i++) v[i] = zeros ? (byte)0 : (byte)(id ^ version);
            v[0] = (byte)version;
            return v;
        }
        using var stop = new CancellationTokenSource(TimeSpan.FromSeconds(2));
        var failures = new List<string>();
        var writer = new Thread(() =>
        {
            var random = new Random(1);
            int version = 0;
            while (!stop.IsCancellationRequested)
            {
                int id = random.Next(keys);
                version = (version + 1) & 0xFF;
                switch (random.Next(50))
                {
                    case 0: cache.Remove(BitConverter.GetBytes(id)); break;
                    case 1: cache.Clear(); break;
                    default: cache.Set(BitConverter.GetBytes(id), Versioned(id, version)); break;
                }
            }
        });
        var readers = Enumerable.Range(0, 2).Select(r => new Thread(() =>
        {
            var random = new Random(r + 10);
            var buffer = new ArrayBufferWriter<byte>(1024);
            while (!stop.IsCancellationRequested)
            {
                int id = random.Next(keys);
                buffer.ResetWrittenCount();
                if (!cache.TryGet(BitConverter.GetBytes(id), buffer)) continue;
                var v = buffer.WrittenSpan;
                int version = v[0];
                bool whole = v.Length == 50 + (version * 37 + id) % 400;
                for (int i = 1; whole && i < v.Length; i++) whole = v[i] == (zeros ? 0 : (byte)(id ^ version));
                if (!whole) lock (failures) failures.Add($"key {id}: torn value of {v.Length} bytes, version {version}");
            }
        })).ToArray();
        writer.Start();
        foreach (var t in readers) t.Start();
        writer.Join();
        foreach (var t in readers) t.Join();
        Assert.Empty(failures);
        Assert.True(cache.GetStatistics().Bytes <= 128 * 1024);
    }

    /// <summary>A clock many threads advance and read at once (a FakeTimeProvider serialises them on one lock).</summary>
    private sealed class SteppedClock : TimeProvider
    {
        private long _ticks = new DateTimeOffset(2026, 1, 1, 0, 0, 0, TimeSpan.Zero).UtcTicks;
        public override DateTimeOffset GetUtcNow() => new(Volatile.Read(ref _ticks), TimeSpan.Zero);
        public void Advance(long ticks) => Interlocked.Add(ref _ticks, ticks);
    }

    /// <summary>A value that says whose it is: key id, version and length in its first 12 bytes, then bytes drawn from
    /// (id, version), so a read can tell a whole value set for its key from a torn, reused or foreign one.</summary>
    private static byte[] Stamped(int id, int version, int length)
    {
        var v = new byte[Math.Max(12, length)];
        BitConverter.TryWriteBytes(v, id);
        BitConverter.TryWriteBytes(v.AsSpan(4), version);
        BitConverter.TryWriteBytes(v.AsSpan(8), v.Length);
        new Random(id * 7919 + version).NextBytes(v.AsSpan(12));
        return v;
    }

    /// <summary>Null if <paramref name="read"/> is a whole value set for key <paramref name="id"/> at a version issued so far.</summary>
    private static string? StampProblem(int id, ReadOnlySpan<byte> read, int issued)
    {
        if (read.Length < 12) return $"key {id}: {read.Length} bytes, shorter than any value set";
        int owner = BitConverter.ToInt32(read), version = BitConverter.ToInt32(read[4..]), length = BitConverter.ToInt32(read[8..]);
        if (owner != id) return $"key {id}: a value of key {owner}";
        if (length != read.Length || version < 1 || version > issued) return $"key {id}: {read.Length} bytes, version {version} of {issued} issued, length {length} stamped";
        return read.SequenceEqual(Stamped(id, version, length)) ? null : $"key {id}: version {version} torn";
    }

    [Fact]
    public void Threads_setting_reading_refreshing_removing_clearing_and_expiring_at_once_read_only_values_set_for_the_key_within_the_budget()
    {
        // Four threads each do everything: sets of every expiry kind (some refused, some already expired), reads by byte
        // and char key, refreshes, removes, a rare Clear, and clock steps that expire entries, on a budget small enough to
        // evict all the time. Every hit must be a whole value some thread set for that key, and the figures never leave
        // their bounds while they move.
        const long maxBytes = 64 * 1024;
        const int keys = 300;
        var clock = new SteppedClock();
        using var cache = NewCache(maxBytes, clock, maxEntryBytes: 8 * 1024);
        var issued = new int[keys];
        var failures = new List<string>();
        long hits = 0;
        using var stop = new CancellationTokenSource(TimeSpan.FromSeconds(2));
        var threads = Enumerable.Range(0, 4).Select(t => new Thread(() =>
        {
            var random = new Random(t);
            var writer = new ArrayBufferWriter<byte>();
            void Fail(string problem)
            {
                lock (failures) failures.Add(problem);
            }
            while (!stop.IsCancellationRequested && failures.Count == 0)
            {
                int id = random.Next(keys);
                string key = "key:" + id;
                int op = random.Next(100);
                if (op < 50)
                {
                    writer.ResetWrittenCount();
                    bool hit = (id & 1) == 0 ? cache.TryGet(key, writer) : cache.TryGet(Encoding.UTF8.GetBytes(key), writer);
                    if (!hit) continue;
                    Interlocked.Increment(ref hits);
                    if (StampProblem(id, writer.WrittenSpan, Volatile.Read(ref issued[id])) is { } problem) Fail(problem);
                }
                else if (op < 85)
                {
                    int version = Interlocked.Increment(ref issued[id]);
                    var value = Stamped(id, version, random.Next(4) == 0 ? random.Next(12, 10_000) : random.Next(12, 400));
                    switch (random.Next(4))
                    {
                        case 0: cache.Set(key, value); break;
                        case 1: cache.Set(key, value, TimeSpan.FromTicks(random.Next(1, 5000))); break;
                        case 2: cache.Set(key, value, new NativeCacheEntryOptions { SlidingExpiration = TimeSpan.FromTicks(random.Next(1, 5000)) }); break;
                        default:
                            cache.Set(key, new ReadOnlySequence<byte>(value), new NativeCacheEntryOptions { AbsoluteExpiration = clock.GetUtcNow().AddTicks(random.Next(-100, 5000)) });
                            break;
                    }
                }
                else if (op < 94) cache.Remove(key);
                else if (op < 97) cache.Refresh(key);
                else if (op == 97 && random.Next(50) == 0) cache.Clear();
                else
                {
                    clock.Advance(random.Next(300));
                    var s = cache.GetStatistics();
                    if (s.Entries < 0 || s.EntryBytes < 0 || s.EntryBytes > s.Bytes || s.Bytes > maxBytes || s.Hits < 0 || s.Misses < 0)
                        Fail($"figures out of bounds: {s.Entries} entries, {s.EntryBytes} entry bytes, {s.Bytes} of {maxBytes} bytes");
                }
            }
        })).ToArray();
        foreach (var t in threads) t.Start();
        foreach (var t in threads) t.Join();
        Assert.Empty(failures);
        Assert.True(hits > 0); // the check ran on reads that hit
        var end = cache.GetStatistics();
        Assert.True(end.Evictions > 0 && end.Expirations > 0 && end.Refusals > 0, $"{end.Evictions} evictions, {end.Expirations} expirations, {end.Refusals} refusals");
        Assert.InRange(end.Bytes, 0, maxBytes);
        // Quiet now: the figures add up to what a walk of the entries finds.
        int live = 0;
        var check = new ArrayBufferWriter<byte>();
        for (int id = 0; id < keys; id++)
        {
            check.ResetWrittenCount();
            if (!cache.TryGet("key:" + id, check)) continue;
            live++;
            Assert.Null(StampProblem(id, check.WrittenSpan, issued[id]));
        }
        Assert.InRange(live, 0, end.Entries); // expired entries still count until removed
    }

    [Fact]
    public void Dispose_racing_readers_and_writers_gives_each_ObjectDisposedException_or_a_whole_value()
    {
        var failures = new List<string>();
        int disposedSeen = 0;
        for (int round = 0; round < 20 && failures.Count == 0; round++)
        {
            var cache = NewCache(64 * 1024);
            for (int id = 0; id < 50; id++) cache.Set(BitConverter.GetBytes(id), Stamped(id, 1, 100 + id * 20));
            using var started = new CountdownEvent(3);
            var threads = Enumerable.Range(0, 3).Select(t => new Thread(() =>
            {
                var random = new Random(round * 10 + t);
                var writer = new ArrayBufferWriter<byte>();
                started.Signal();
                try
                {
                    while (true)
                    {
                        int id = random.Next(50);
                        if (t == 2) cache.Set(BitConverter.GetBytes(id), Stamped(id, 1, 100 + id * 20));
                        writer.ResetWrittenCount();
                        if (cache.TryGet(BitConverter.GetBytes(id), writer) && StampProblem(id, writer.WrittenSpan, 1) is { } problem)
                        {
                            lock (failures) failures.Add(problem);
                            return;
                        }
                    }
                }
                catch (ObjectDisposedException)
                {
                    Interlocked.Increment(ref disposedSeen);
                }
                catch (Exception e)
                {
                    lock (failures) failures.Add(e.ToString());
                }
            })).ToArray();
            foreach (var t in threads) t.Start();
            started.Wait();
            Thread.Sleep(round % 3); // disposes at different points of the threads' work
            cache.Dispose();
            foreach (var t in threads) t.Join();
        }
        Assert.Empty(failures);
        Assert.True(disposedSeen > 0);
    }
}

/// <summary>
/// Counts this thread's allocations over gets and sets that evict and reclaim: runs alone, because a thread of another test
/// class reading a cache for the first time registers a reader slot, and the next reclaim on this thread then rebuilds the
/// gate's slot list once (an allocation of the new thread's registration, not of the get or set measured).
/// </summary>
[Collection(nameof(Manaloc.Tests.Memory.ProcessMemoryCollection))]
public sealed class NativeCacheAllocationTests
{
    [Fact]
    public void TryGet_into_a_reused_writer_and_Set_after_warm_up_allocate_nothing()
    {
        using var cache = new NativeCache(new NativeCacheOptions { MaxBytes = 256 * 1024 });
        byte[] value = new byte[300];
        var keys = new byte[2000][];
        for (int i = 0; i < keys.Length; i++) keys[i] = BitConverter.GetBytes(i);
        var writer = new ArrayBufferWriter<byte>(4096);
        void Run()
        {
            for (int i = 0; i < keys.Length; i++)
            {
                cache.Set(keys[i], value); // beyond the budget: evicts and reclaims
                writer.ResetWrittenCount();
                cache.TryGet(keys[i], writer);
                cache.TryGet(keys[(i * 7) % keys.Length], writer);
                cache.Set("string-key", value);
                writer.ResetWrittenCount();
                cache.TryGet("string-key", writer);
            }
        }
        Run();
        Assert.Equal(0, Allocations.OnThisThread(Run));
    }
}
