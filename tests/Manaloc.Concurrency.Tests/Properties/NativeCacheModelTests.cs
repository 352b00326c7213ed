using System.Buffers;
using CsCheck;
using Manaloc.Collections;

namespace Manaloc.Concurrency.Tests.Properties;

/// <summary>
/// NativeCache against a reference model: random sequences of Set (with and without expiry), TryGet, Refresh, Remove,
/// time steps and Clear. Within a budget that holds every key the answers must be the model's exactly (a hit returns
/// the last value set, an expired or removed key never hits, and the entry bytes equal the model's sum); in a budget
/// that forces eviction a hit must still return exactly the last value set and a key the model says is gone must miss.
/// </summary>
public sealed class NativeCacheModelTests
{
    /// <summary>A clock moved only by the test.</summary>
    private sealed class ManualClock : TimeProvider
    {
        public long Ticks = new DateTimeOffset(2030, 1, 1, 0, 0, 0, TimeSpan.Zero).UtcTicks;
        public override DateTimeOffset GetUtcNow() => new(Ticks, TimeSpan.Zero);
    }

    /// <summary>The model's entry: the value, the expiry as the cache computes it, the absolute cap and the sliding span.</summary>
    private sealed record Entry(byte[] Value, long Expires, long Absolute, long Sliding);

    // 0 Set never, 1 Set ttl, 2 Set sliding (+ttl), 3 TryGet, 4 Refresh, 5 Remove, 6 advance time, 7 Clear
    private static readonly Gen<(int Op, int Key, int Length, int Seconds)> s_op =
        Gen.Select(Gen.Frequency((8, Gen.Int[0, 2]), (6, Gen.Const(3)), (1, Gen.Const(4)), (2, Gen.Const(5)), (2, Gen.Const(6)), (1, Gen.Const(7))),
            Gen.Int[0, 15], Gen.Int[0, 300], Gen.Int[0, 6]);

    private static byte[] KeyOf(int key) => [(byte)'k', (byte)key, (byte)(key * 31)];

    private static byte[] ValueOf(int length, int seed)
    {
        var v = new byte[length];
        for (int i = 0; i < v.Length; i++) v[i] = (byte)(seed * 7 + i);
        return v;
    }

    private static void Run((int Op, int Key, int Length, int Seconds)[] ops, long maxBytes, bool exact)
    {
        var clock = new ManualClock();
        using var cache = new NativeCache(new NativeCacheOptions { MaxBytes = maxBytes, TimeProvider = clock });
        var model = new Dictionary<int, Entry>();
        var writer = new ArrayBufferWriter<byte>();
        int step = 0;
        foreach (var (op, key, length, seconds) in ops)
        {
            step++;
            byte[] k = KeyOf(key);
            long now = clock.Ticks;
            bool Live(out Entry e) => model.TryGetValue(key, out e!) && e.Expires > now;
            switch (op)
            {
                case 0:
                case 1:
                case 2:
                {
                    byte[] value = ValueOf(length, step);
                    long ttl = TimeSpan.FromSeconds(seconds).Ticks;
                    var options = op switch
                    {
                        0 => default,
                        1 => new NativeCacheEntryOptions { TimeToLive = TimeSpan.FromTicks(ttl) },
                        _ => new NativeCacheEntryOptions { SlidingExpiration = TimeSpan.FromSeconds(1 + seconds % 3), TimeToLive = seconds > 3 ? TimeSpan.FromSeconds(seconds) : null },
                    };
                    bool stored = cache.Set(k, value, options);
                    long absolute = op == 1 || (op == 2 && seconds > 3) ? now + ttl : long.MaxValue;
                    long sliding = op == 2 ? TimeSpan.FromSeconds(1 + seconds % 3).Ticks : 0;
                    long expires = sliding != 0 && sliding < absolute - now ? now + sliding : absolute;
                    bool fits = NativeCache.EntrySize(k.Length, value.Length) <= cache.MaxEntryBytes;
                    Assert.Equal(fits && expires > now, stored); // refused only when too large or already expired
                    if (stored) model[key] = new Entry(value, expires, absolute, sliding);
                    else model.Remove(key);
                    break;
                }
                case 3:
                {
                    writer.ResetWrittenCount();
                    bool hit = cache.TryGet(k, writer);
                    bool live = Live(out var e);
                    if (hit)
                    {
                        Assert.True(live, $"step {step}: key {key} hit but the model says it is absent or expired");
                        Assert.Equal(e.Value, writer.WrittenSpan.ToArray());
                    }
                    else if (exact)
                    {
                        Assert.False(live, $"step {step}: key {key} missed within a budget that holds every key");
                    }
                    if (hit && e.Sliding != 0) model[key] = e with { Expires = now > e.Absolute - e.Sliding ? e.Absolute : now + e.Sliding };
                    break;
                }
                case 4:
                {
                    bool refreshed = cache.Refresh(k);
                    bool live = Live(out var e);
                    if (refreshed) Assert.True(live, $"step {step}: refreshed key {key} is absent or expired in the model");
                    else if (exact) Assert.False(live);
                    if (refreshed && e.Sliding != 0) model[key] = e with { Expires = now > e.Absolute - e.Sliding ? e.Absolute : now + e.Sliding };
                    break;
                }
                case 5:
                {
                    bool removed = cache.Remove(k);
                    bool live = Live(out _);
                    if (removed) Assert.True(live);
                    else if (exact) Assert.False(live);
                    model.Remove(key);
                    break;
                }
                case 6:
                    clock.Ticks += TimeSpan.FromSeconds(seconds).Ticks / 2;
                    break;
                default:
                    cache.Clear();
                    model.Clear();
                    break;
            }
            var stats = cache.GetStatistics();
            Assert.True(stats.Bytes <= maxBytes, $"step {step}: {stats.Bytes} bytes above the budget");
            if (exact)
            {
                // The cache keeps an expired entry until it removes it (no eviction here), so the model's sum counts them too.
                Assert.Equal(model.Count, stats.Entries);
                Assert.Equal(model.Sum(p => NativeCache.EntrySize(KeyOf(p.Key).Length, p.Value.Value.Length)), stats.EntryBytes);
            }
        }
    }

    [Fact]
    public void Within_a_budget_that_holds_every_key_the_cache_answers_as_the_model()
        => s_op.Array[1, 200].Sample(ops => Run(ops, 1 << 20, exact: true), iter: 300);

    [Fact]
    public void Under_eviction_a_hit_is_the_last_value_set_and_a_gone_key_never_hits()
        => s_op.Array[1, 300].Sample(ops => Run(ops, NativeCache.MinimumMaxBytes, exact: false), iter: 300);
}
