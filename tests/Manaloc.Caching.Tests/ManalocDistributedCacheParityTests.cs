using System.Buffers;
using Manaloc.Collections;
using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.Caching.Memory;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.Time.Testing;

namespace Manaloc.Caching.Tests;

/// <summary>
/// <see cref="ManalocDistributedCache"/> beside <see cref="MemoryDistributedCache"/> (the in-process
/// <see cref="IDistributedCache"/> callers know): each scenario runs on both, each on its own fake clock, and what a
/// caller observes must be the same. Where the two differ by design (a cancelled token) <see cref="ManalocDistributedCacheTests"/> states the native behaviour.
/// </summary>
public sealed class ManalocDistributedCacheParityTests
{
    private static readonly DateTimeOffset Start = new(2026, 1, 1, 0, 0, 0, TimeSpan.Zero);
    private static readonly DistributedCacheEntryOptions NoExpiry = new();

    // The memory cache's clock is an ISystemClock (its only clock option), here reading the fake one.
#pragma warning disable CS0618
    private sealed class FakeSystemClock(TimeProvider time) : Microsoft.Extensions.Internal.ISystemClock
    {
        public DateTimeOffset UtcNow => time.GetUtcNow();
    }

    private static MemoryDistributedCache Memory(FakeTimeProvider clock)
        => new(Options.Create(new MemoryDistributedCacheOptions { Clock = new FakeSystemClock(clock) }));
#pragma warning restore CS0618

    public static TheoryData<string> Scenarios() =>
    [
        "missing", "set-get", "overwrite", "remove", "remove-missing", "refresh-missing", "empty-value", "empty-key",
        "non-ascii-key", "lone-surrogate-key", "long-key", "absolute-past-removes-older", "absolute-now", "absolute-until-then",
        "relative-until-then", "earlier-of-absolute-and-relative", "sliding-kept-by-reads", "sliding-kept-by-refresh",
        "sliding-kept-by-refresh-async", "sliding-capped-by-absolute", "async-twins", "null-arguments",
    ];

    [Theory]
    [MemberData(nameof(Scenarios))]
    public async Task A_caller_observes_what_MemoryDistributedCache_gives(string scenario)
    {
        var memoryClock = new FakeTimeProvider(Start);
        var nativeClock = new FakeTimeProvider(Start);
        using var native = new NativeCache(new NativeCacheOptions { MaxBytes = 1 << 20, TimeProvider = nativeClock });
        var expected = await Observe(Memory(memoryClock), memoryClock, scenario);
        var actual = await Observe(new ManalocDistributedCache(native), nativeClock, scenario);
        Assert.NotEmpty(expected);
        Assert.Equal(expected, actual);
    }

    [Fact]
    public void A_value_above_the_size_limit_is_not_stored_and_the_older_value_is_gone_as_in_MemoryDistributedCache()
    {
        // MemoryDistributedCache sizes each entry by its value's length; an entry above SizeLimit is dropped without a word
        // and the key's older entry with it. The native adapter does the same (and counts and logs the refusal).
        var memory = new MemoryDistributedCache(Options.Create(new MemoryDistributedCacheOptions { SizeLimit = 4096 }));
        using var native = new NativeCache(new NativeCacheOptions { MaxBytes = 1 << 20, MaxEntryBytes = 4096 });
        foreach (var cache in new IDistributedCache[] { memory, new ManalocDistributedCache(native) })
        {
            cache.Set("k", [1, 2, 3], NoExpiry);
            cache.Set("k", new byte[8192], NoExpiry);
            Assert.Null(cache.Get("k"));
            cache.Set("k", [4], NoExpiry);
            Assert.Equal(new byte[] { 4 }, cache.Get("k"));
        }
        Assert.Equal(1, native.GetStatistics().Refusals);
    }

    /// <summary>What a caller sees in <paramref name="scenario"/>: each read's value (or null), each exception's type and parameter.</summary>
    private static async Task<List<string>> Observe(IDistributedCache cache, FakeTimeProvider clock, string scenario)
    {
        var seen = new List<string>();
        void Read(string key) => seen.Add(cache.Get(key) is { } v ? Convert.ToHexString(v) : "null");
        void Try(Action call)
        {
            try
            {
                call();
                seen.Add("ok");
            }
            catch (Exception e)
            {
                seen.Add($"{e.GetType().Name}({(e as ArgumentException)?.ParamName})");
            }
        }
        void Advance(int seconds) => clock.Advance(TimeSpan.FromSeconds(seconds));
        var sliding = new DistributedCacheEntryOptions { SlidingExpiration = TimeSpan.FromMinutes(1) };
        switch (scenario)
        {
            case "missing":
                Read("absent");
                seen.Add((await cache.GetAsync("absent")) is null ? "null" : "hit");
                break;
            case "set-get":
                cache.Set("k", [1, 2, 3], NoExpiry);
                Read("k");
                break;
            case "overwrite":
                cache.Set("k", [1, 2, 3], NoExpiry);
                cache.Set("k", [4], NoExpiry);
                Read("k");
                break;
            case "remove":
                cache.Set("k", [1], NoExpiry);
                cache.Remove("k");
                Read("k");
                break;
            case "remove-missing":
                Try(() => cache.Remove("absent"));
                break;
            case "refresh-missing":
                Try(() => cache.Refresh("absent"));
                Read("absent");
                break;
            case "empty-value":
                cache.Set("k", [], NoExpiry);
                Read("k");
                break;
            case "empty-key":
                cache.Set("", [7], NoExpiry);
                Read("");
                break;
            case "non-ascii-key":
                cache.Set("ключ-🔑-clé", [1], NoExpiry);
                cache.Set("ключ-🔑-cle", [2], NoExpiry);
                Read("ключ-🔑-clé");
                Read("ключ-🔑-cle");
                break;
            case "lone-surrogate-key":
                // Strings that are not valid UTF-16 are keys too, each its own: the lone surrogates differ, and neither is
                // the replacement char a lossy encoding would put in their place.
                cache.Set("ab\uD800", [1], NoExpiry);
                cache.Set("ab\uD801", [2], NoExpiry);
                cache.Set("ab\uFFFD", [3], NoExpiry);
                cache.Set("\uDC00\uD800", [4], sliding);
                Read("ab\uD800");
                Read("ab\uD801");
                Read("ab\uFFFD");
                Read("ab");
                Advance(50);
                Try(() => cache.Refresh("\uDC00\uD800"));
                Advance(50);
                Read("\uDC00\uD800");
                cache.Remove("ab\uD800");
                Read("ab\uD800");
                Read("ab\uD801");
                break;
            case "long-key":
                cache.Set(new string('k', 2000), [5], NoExpiry);
                Read(new string('k', 2000));
                Read(new string('k', 1999));
                break;
            case "absolute-past-removes-older":
                cache.Set("k", [1], NoExpiry);
                cache.Set("k", [2], new DistributedCacheEntryOptions { AbsoluteExpiration = clock.GetUtcNow().AddSeconds(-1) });
                Read("k");
                break;
            case "absolute-now":
                cache.Set("k", [1], new DistributedCacheEntryOptions { AbsoluteExpiration = clock.GetUtcNow() });
                Read("k");
                break;
            case "absolute-until-then":
                cache.Set("k", [1], new DistributedCacheEntryOptions { AbsoluteExpiration = clock.GetUtcNow().AddMinutes(1) });
                Advance(59);
                Read("k");
                Advance(1);
                Read("k");
                break;
            case "relative-until-then":
                cache.Set("k", [1], new DistributedCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromMinutes(1) });
                Advance(59);
                Read("k");
                Advance(1);
                Read("k");
                break;
            case "earlier-of-absolute-and-relative":
                cache.Set("a", [1], new DistributedCacheEntryOptions { AbsoluteExpiration = clock.GetUtcNow().AddMinutes(1), AbsoluteExpirationRelativeToNow = TimeSpan.FromMinutes(10) });
                cache.Set("r", [2], new DistributedCacheEntryOptions { AbsoluteExpiration = clock.GetUtcNow().AddMinutes(10), AbsoluteExpirationRelativeToNow = TimeSpan.FromMinutes(1) });
                Advance(61);
                Read("a");
                Read("r");
                break;
            case "sliding-kept-by-reads":
                cache.Set("k", [1], sliding);
                for (int i = 0; i < 3; i++)
                {
                    Advance(50);
                    Read("k");
                }
                Advance(61);
                Read("k");
                break;
            case "sliding-kept-by-refresh":
                cache.Set("k", [1], sliding);
                for (int i = 0; i < 3; i++)
                {
                    Advance(50);
                    cache.Refresh("k");
                }
                Read("k");
                Advance(61);
                Read("k");
                break;
            case "sliding-kept-by-refresh-async":
                cache.Set("k", [1], sliding);
                for (int i = 0; i < 3; i++)
                {
                    Advance(50);
                    await cache.RefreshAsync("k");
                }
                Read("k");
                break;
            case "sliding-capped-by-absolute":
                cache.Set("k", [1], new DistributedCacheEntryOptions { SlidingExpiration = TimeSpan.FromMinutes(1), AbsoluteExpirationRelativeToNow = TimeSpan.FromSeconds(100) });
                Advance(50);
                Read("k");
                Advance(49);
                Read("k");
                Advance(2);
                Read("k");
                break;
            case "async-twins":
                await cache.SetAsync("k", [9, 8], NoExpiry);
                seen.Add(Convert.ToHexString((await cache.GetAsync("k"))!));
                await cache.RemoveAsync("k");
                Read("k");
                break;
            case "null-arguments":
                Try(() => cache.Get(null!));
                Try(() => cache.GetAsync(null!));
                Try(() => cache.Set(null!, [1], NoExpiry));
                Try(() => cache.Set("k", null!, NoExpiry));
                Try(() => cache.Set("k", [1], null!));
                Try(() => cache.SetAsync(null!, [1], NoExpiry));
                Try(() => cache.SetAsync("k", null!, NoExpiry));
                Try(() => cache.SetAsync("k", [1], null!));
                Try(() => cache.Refresh(null!));
                Try(() => cache.RefreshAsync(null!));
                Try(() => cache.Remove(null!));
                Try(() => cache.RemoveAsync(null!));
                break;
            default:
                throw new ArgumentOutOfRangeException(nameof(scenario), scenario, "no such scenario");
        }
        return seen;
    }
}
