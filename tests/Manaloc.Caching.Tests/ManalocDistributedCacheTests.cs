using System.Buffers;
using Manaloc.Collections;
using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.Time.Testing;

namespace Manaloc.Caching.Tests;

/// <summary>
/// <see cref="ManalocDistributedCache"/>'s contract as HybridCache and other callers of <see cref="IDistributedCache"/>
/// drive it: get, set, refresh and remove with their async twins, the expiry options on a fake clock, the
/// <see cref="IBufferDistributedCache"/> path, refusals and cancellation.
/// </summary>
public sealed class ManalocDistributedCacheTests : IDisposable
{
    private static readonly DistributedCacheEntryOptions NoExpiry = new();
    private readonly FakeTimeProvider _clock = new(new DateTimeOffset(2026, 1, 1, 0, 0, 0, TimeSpan.Zero));
    private readonly NativeCache _native;
    private readonly ManalocDistributedCache _cache;

    public ManalocDistributedCacheTests()
    {
        _native = new NativeCache(new NativeCacheOptions { MaxBytes = 4 << 20, MaxEntryBytes = 256 << 10, TimeProvider = _clock, Name = "tests" });
        _cache = new ManalocDistributedCache(_native);
    }

    public void Dispose() => _native.Dispose();

    private static byte[] Bytes(int length, byte seed)
    {
        var bytes = new byte[length];
        for (int i = 0; i < length; i++) bytes[i] = (byte)(seed + i * 7);
        return bytes;
    }

    [Fact]
    public void Values_are_copied_in_and_out_so_changing_either_array_leaves_the_cache_alone()
    {
        // MemoryDistributedCache keeps the caller's array and hands it back: a change to either shows in that cache.
        var value = new byte[] { 1, 2, 3 };
        _cache.Set("k", value, NoExpiry);
        value[0] = 9;
        var first = _cache.Get("k")!;
        first[1] = 9;
        var second = _cache.Get("k")!;
        Assert.Equal(new byte[] { 1, 2, 3 }, second);
        Assert.NotSame(first, second);
    }

    [Fact]
    public void A_miss_is_null_and_a_set_value_comes_back_byte_for_byte()
    {
        Assert.Null(_cache.Get("absent"));
        var value = Bytes(300, 1);
        _cache.Set("k", value, NoExpiry);
        Assert.Equal(value, _cache.Get("k"));
        Assert.NotSame(value, _cache.Get("k"));
    }

    [Fact]
    public void The_last_set_wins_and_an_empty_value_is_a_hit()
    {
        _cache.Set("k", Bytes(500, 1), NoExpiry);
        _cache.Set("k", Bytes(20, 9), NoExpiry);
        Assert.Equal(Bytes(20, 9), _cache.Get("k"));
        _cache.Set("empty", [], NoExpiry);
        Assert.Equal(Array.Empty<byte>(), _cache.Get("empty"));
    }

    [Fact]
    public void Keys_are_compared_ordinally_as_their_utf8_bytes()
    {
        _cache.Set("clé", [1], NoExpiry);
        _cache.Set("CLÉ", [2], NoExpiry);
        _cache.Set("", [3], NoExpiry);
        Assert.Equal(new byte[] { 1 }, _cache.Get("clé"));
        Assert.Equal(new byte[] { 2 }, _cache.Get("CLÉ"));
        Assert.Equal(new byte[] { 3 }, _cache.Get(""));
        Assert.Null(_cache.Get("cle"));
    }

    [Fact]
    public void Remove_makes_the_next_read_miss_and_removing_an_absent_key_is_harmless()
    {
        _cache.Set("k", [1, 2, 3], NoExpiry);
        _cache.Remove("k");
        Assert.Null(_cache.Get("k"));
        _cache.Remove("k");
        _cache.Remove("never");
        Assert.Equal(0, _native.Count);
    }

    [Fact]
    public async Task The_async_twins_do_what_the_sync_methods_do_and_complete_synchronously()
    {
        var set = _cache.SetAsync("k", [4, 5], NoExpiry);
        Assert.True(set.IsCompletedSuccessfully);
        await set;
        var get = _cache.GetAsync("k");
        Assert.True(get.IsCompletedSuccessfully);
        Assert.Equal(new byte[] { 4, 5 }, await get);
        var refresh = _cache.RefreshAsync("k");
        Assert.True(refresh.IsCompletedSuccessfully);
        var remove = _cache.RemoveAsync("k");
        Assert.True(remove.IsCompletedSuccessfully);
        Assert.Null(await _cache.GetAsync("k"));
    }

    [Fact]
    public void TryGet_writes_a_hit_into_the_caller_s_writer_and_nothing_on_a_miss()
    {
        var writer = new ArrayBufferWriter<byte>();
        writer.Write(new byte[] { 0xEE }); // what the caller had written before stays
        Assert.False(_cache.TryGet("k", writer));
        Assert.Equal(1, writer.WrittenCount);
        _cache.Set("k", Bytes(1000, 3), NoExpiry);
        Assert.True(_cache.TryGet("k", writer));
        Assert.Equal((byte[])[0xEE, .. Bytes(1000, 3)], writer.WrittenSpan.ToArray());
    }

    [Theory]
    [InlineData(0, 1)]
    [InlineData(1, 1)]
    [InlineData(1000, 7)]
    [InlineData(5000, 4096)]
    public async Task A_multi_segment_sequence_is_stored_whole_through_the_buffer_path(int length, int pieceLength)
    {
        IBufferDistributedCache buffers = _cache;
        var value = Bytes(length, 5);
        buffers.Set("sync", Segments.Of(value, pieceLength), NoExpiry);
        var written = buffers.SetAsync("async", Segments.Of(value, pieceLength), NoExpiry);
        Assert.True(written.IsCompletedSuccessfully);
        await written;
        foreach (var key in new[] { "sync", "async" })
        {
            var writer = new ArrayBufferWriter<byte>();
            var read = buffers.TryGetAsync(key, writer);
            Assert.True(read.IsCompletedSuccessfully);
            Assert.True(await read);
            Assert.Equal(value, writer.WrittenSpan.ToArray());
            Assert.Equal(value, _cache.Get(key));
        }
    }

    [Fact]
    public void A_large_value_comes_back_whole_and_then_a_small_one_does_too()
    {
        var large = Bytes(200_000, 11);
        _cache.Set("large", large, NoExpiry);
        _cache.Set("small", [1, 2], NoExpiry);
        Assert.Equal(large, _cache.Get("large"));
        Assert.Equal(new byte[] { 1, 2 }, _cache.Get("small"));
        Assert.Equal(large, _cache.Get("large"));
    }

    [Fact]
    public void Relative_expiry_keeps_the_entry_until_its_time_and_not_after()
    {
        _cache.Set("k", [1], new DistributedCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromMinutes(1) });
        _clock.Advance(TimeSpan.FromSeconds(59));
        Assert.Equal(new byte[] { 1 }, _cache.Get("k"));
        _clock.Advance(TimeSpan.FromSeconds(2));
        Assert.Null(_cache.Get("k"));
        Assert.False(_cache.TryGet("k", new ArrayBufferWriter<byte>()));
    }

    [Fact]
    public void Absolute_expiry_keeps_the_entry_until_that_instant_and_not_after()
    {
        _cache.Set("k", [1], new DistributedCacheEntryOptions { AbsoluteExpiration = _clock.GetUtcNow().AddMinutes(5) });
        _clock.Advance(TimeSpan.FromMinutes(4));
        Assert.Equal(new byte[] { 1 }, _cache.Get("k"));
        _clock.Advance(TimeSpan.FromMinutes(2));
        Assert.Null(_cache.Get("k"));
    }

    [Theory]
    [InlineData(1, 10)] // the relative time is earlier
    [InlineData(10, 1)] // the absolute time is earlier
    public void With_both_absolute_forms_the_earlier_wins(int relativeMinutes, int absoluteMinutes)
    {
        _cache.Set("k", [1], new DistributedCacheEntryOptions
        {
            AbsoluteExpirationRelativeToNow = TimeSpan.FromMinutes(relativeMinutes),
            AbsoluteExpiration = _clock.GetUtcNow().AddMinutes(absoluteMinutes),
        });
        _clock.Advance(TimeSpan.FromSeconds(50));
        Assert.NotNull(_cache.Get("k"));
        _clock.Advance(TimeSpan.FromSeconds(20));
        Assert.Null(_cache.Get("k"));
    }

    [Fact]
    public void Sliding_expiry_is_restarted_by_each_read_and_by_refresh()
    {
        _cache.Set("k", [1], new DistributedCacheEntryOptions { SlidingExpiration = TimeSpan.FromMinutes(1) });
        for (int i = 0; i < 3; i++)
        {
            _clock.Advance(TimeSpan.FromSeconds(50));
            Assert.NotNull(_cache.Get("k")); // restarts the window
        }
        _clock.Advance(TimeSpan.FromSeconds(50));
        _cache.Refresh("k");
        _clock.Advance(TimeSpan.FromSeconds(50));
        Assert.True(_cache.TryGet("k", new ArrayBufferWriter<byte>()));
        _clock.Advance(TimeSpan.FromSeconds(61));
        _cache.Refresh("k"); // too late: it has expired
        Assert.Null(_cache.Get("k"));
    }

    [Fact]
    public void Sliding_expiry_never_outlives_an_absolute_limit()
    {
        _cache.Set("k", [1], new DistributedCacheEntryOptions { SlidingExpiration = TimeSpan.FromMinutes(1), AbsoluteExpirationRelativeToNow = TimeSpan.FromMinutes(2) });
        _clock.Advance(TimeSpan.FromSeconds(50));
        Assert.NotNull(_cache.Get("k"));
        _clock.Advance(TimeSpan.FromSeconds(50));
        Assert.NotNull(_cache.Get("k"));
        _clock.Advance(TimeSpan.FromSeconds(30)); // 130 s: inside the window, past the absolute limit
        Assert.Null(_cache.Get("k"));
    }

    [Fact]
    public void An_absolute_time_already_past_stores_nothing_and_removes_the_older_value()
    {
        _cache.Set("k", [1], NoExpiry);
        _cache.Set("k", [2], new DistributedCacheEntryOptions { AbsoluteExpiration = _clock.GetUtcNow().AddSeconds(-1) });
        Assert.Null(_cache.Get("k"));
    }

    [Fact]
    public void A_value_over_the_entry_limit_is_refused_counted_and_leaves_no_stale_value()
    {
        _cache.Set("k", [1, 2, 3], NoExpiry);
        long refusals = _native.GetStatistics().Refusals;
        _cache.Set("k", new byte[300 << 10], NoExpiry);
        Assert.Null(_cache.Get("k"));
        Assert.Equal(refusals + 1, _native.GetStatistics().Refusals);
        ((IBufferDistributedCache)_cache).Set("k", Segments.Of(new byte[300 << 10], 4096), NoExpiry);
        Assert.Equal(refusals + 2, _native.GetStatistics().Refusals);
        Assert.Null(_cache.Get("k"));
    }

    [Fact]
    public async Task A_cancelled_token_gives_a_cancelled_task_and_changes_nothing()
    {
        using var cancelled = new CancellationTokenSource();
        await cancelled.CancelAsync();
        var token = cancelled.Token;
        _cache.Set("k", [1], new DistributedCacheEntryOptions { SlidingExpiration = TimeSpan.FromMinutes(1) });

        await AssertCancelled(_cache.GetAsync("k", token));
        await AssertCancelled(_cache.SetAsync("k", [2], NoExpiry, token));
        await AssertCancelled(_cache.SetAsync("k", Segments.Of([3, 3], 1), NoExpiry, token).AsTask());
        await AssertCancelled(_cache.TryGetAsync("k", new ArrayBufferWriter<byte>(), token).AsTask());
        await AssertCancelled(_cache.RemoveAsync("k", token));
        _clock.Advance(TimeSpan.FromSeconds(50));
        await AssertCancelled(_cache.RefreshAsync("k", token));
        _clock.Advance(TimeSpan.FromSeconds(20)); // the cancelled refresh did not restart the window
        Assert.Null(_cache.Get("k"));

        _cache.Set("k2", [1], NoExpiry);
        await AssertCancelled(_cache.RemoveAsync("k2", token));
        Assert.Equal(new byte[] { 1 }, _cache.Get("k2")); // the cancelled set and remove left it as it was
    }

    private static async Task AssertCancelled(Task task)
    {
        Assert.True(task.IsCanceled);
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => task);
    }

    [Fact]
    public async Task A_writer_that_gives_less_than_the_size_asked_for_is_refused_naming_it()
    {
        IBufferDistributedCache buffers = _cache;
        _cache.Set("big", Bytes(5000, 1), NoExpiry);
        var writer = new FixedWriter(64);
        Assert.Equal("destination", Assert.Throws<ArgumentException>(() => buffers.TryGet("big", writer)).ParamName);
        Assert.Contains("GetSpan(5000)", (await Assert.ThrowsAsync<ArgumentException>(() => buffers.TryGetAsync("big", writer).AsTask())).Message);
        Assert.Equal(0, writer.Advanced);
        Assert.Equal(Bytes(5000, 1), _cache.Get("big"));
    }

    /// <summary>A writer whose span is never larger than its buffer, whatever it is asked for (it breaks GetSpan's
    /// contract); it stops a caller that asks it a hundred times.</summary>
    private sealed class FixedWriter(int capacity) : IBufferWriter<byte>
    {
        private readonly byte[] _buffer = new byte[capacity];
        private int _asked;
        public int Advanced { get; private set; }
        public void Advance(int count) => Advanced += count;
        public Memory<byte> GetMemory(int sizeHint = 0) => ++_asked > 100 ? throw new InvalidOperationException("asked 100 times") : _buffer;
        public Span<byte> GetSpan(int sizeHint = 0) => GetMemory(sizeHint).Span;
    }

    [Fact]
    public void Null_arguments_are_refused_naming_them()
    {
        Assert.Equal("key", Assert.Throws<ArgumentNullException>(() => _cache.Get(null!)).ParamName);
        Assert.Equal("value", Assert.Throws<ArgumentNullException>(() => _cache.Set("k", null!, NoExpiry)).ParamName);
        Assert.Equal("options", Assert.Throws<ArgumentNullException>(() => _cache.Set("k", [1], null!)).ParamName);
        Assert.Equal("destination", Assert.Throws<ArgumentNullException>(() => _cache.TryGet("k", null!)).ParamName);
        Assert.Equal("key", Assert.Throws<ArgumentNullException>(() => { _ = _cache.RemoveAsync(null!); }).ParamName);
        Assert.Equal("cache", Assert.Throws<ArgumentNullException>(() => new ManalocDistributedCache(null!)).ParamName);
    }

    [Fact]
    public void After_the_cache_is_disposed_every_call_throws_ObjectDisposedException()
    {
        _cache.Set("k", [1], NoExpiry);
        _native.Dispose();
        Assert.Throws<ObjectDisposedException>(() => _cache.Get("k"));
        Assert.Throws<ObjectDisposedException>(() => _cache.Set("k", [1], NoExpiry));
        Assert.Throws<ObjectDisposedException>(() => _cache.Remove("k"));
        Assert.Throws<ObjectDisposedException>(() => _cache.Refresh("k"));
        Assert.Throws<ObjectDisposedException>(() => _cache.TryGet("k", new ArrayBufferWriter<byte>()));
    }

    [Fact]
    public void Concurrent_writers_and_readers_see_only_whole_values()
    {
        // Each value is one byte repeated over a length that byte gives: a torn or mixed read shows as a mismatch.
        const int Keys = 16;
        int failures = 0;
        Parallel.For(0, 4, worker =>
        {
            var random = new Random(worker);
            var writer = new ArrayBufferWriter<byte>();
            for (int i = 0; i < 20_000; i++)
            {
                string key = "k" + random.Next(Keys);
                if (random.Next(4) == 0)
                {
                    byte tag = (byte)random.Next(1, 256);
                    _cache.Set(key, Enumerable.Repeat(tag, tag * 3).ToArray(), NoExpiry);
                }
                else
                {
                    writer.ResetWrittenCount();
                    if (!_cache.TryGet(key, writer)) continue;
                    var read = writer.WrittenSpan;
                    if (read.Length == 0 || read.Length != read[0] * 3 || read.IndexOfAnyExcept(read[0]) >= 0) Interlocked.Increment(ref failures);
                }
            }
        });
        Assert.Equal(0, failures);
    }
}
