using Manaloc.Collections;

namespace Manaloc.Tests.Collections;

/// <summary>A 24-byte value whose three fields are always written equal, so a torn read shows as unequal fields.</summary>
public readonly record struct Payload(long A, long B, long C)
{
    public static Payload Of(long v) => new(v, v, v);
    public bool IsWhole => A == B && B == C;
}

/// <summary>The members both maps share, so one contract test class runs against each.</summary>
public interface IMapUnderTest : IDisposable
{
    bool TryAdd(long key, Payload value);
    bool TryGetValue(long key, out Payload value);
    Payload this[long key] { get; set; }
    bool ContainsKey(long key);
    bool Remove(long key);
    bool Remove(long key, out Payload value);
    int Count { get; }
    void Clear();
    List<KeyValuePair<long, Payload>> Entries();
    long NativeBytes { get; }
}

internal sealed class PlainMap(NativeMap<long, Payload> map) : IMapUnderTest
{
    public NativeMap<long, Payload> Map => map;
    public bool TryAdd(long key, Payload value) => map.TryAdd(key, value);
    public bool TryGetValue(long key, out Payload value) => map.TryGetValue(key, out value);
    public Payload this[long key] { get => map[key]; set => map[key] = value; }
    public bool ContainsKey(long key) => map.ContainsKey(key);
    public bool Remove(long key) => map.Remove(key);
    public bool Remove(long key, out Payload value) => map.Remove(key, out value);
    public int Count => map.Count;
    public void Clear() => map.Clear();
    public List<KeyValuePair<long, Payload>> Entries()
    {
        var list = new List<KeyValuePair<long, Payload>>();
        foreach (var e in map) list.Add(e);
        return list;
    }
    public long NativeBytes => map.NativeBytes;
    public void Dispose() => map.Dispose();
}

internal sealed class SharedMap(ConcurrentNativeMap<long, Payload> map) : IMapUnderTest
{
    public ConcurrentNativeMap<long, Payload> Map => map;
    public bool TryAdd(long key, Payload value) => map.TryAdd(key, value);
    public bool TryGetValue(long key, out Payload value) => map.TryGetValue(key, out value);
    public Payload this[long key] { get => map[key]; set => map[key] = value; }
    public bool ContainsKey(long key) => map.ContainsKey(key);
    public bool Remove(long key) => map.Remove(key);
    public bool Remove(long key, out Payload value) => map.Remove(key, out value);
    public int Count => map.Count;
    public void Clear() => map.Clear();
    public List<KeyValuePair<long, Payload>> Entries()
    {
        var list = new List<KeyValuePair<long, Payload>>();
        foreach (var e in map) list.Add(e);
        return list;
    }
    public long NativeBytes => map.NativeBytes;
    public void Dispose() => map.Dispose();
}

/// <summary>The contract both maps keep: Dictionary's answers, exceptions, disposal, memory given back.</summary>
public abstract class MapContractTests
{
    protected abstract IMapUnderTest Create(NativeMapOptions<long>? options = null);

    [Fact]
    public void Adds_finds_replaces_and_removes_like_a_Dictionary()
    {
        using var map = Create();
        var model = new Dictionary<long, Payload>();
        var random = new Random(7);
        for (int i = 0; i < 200_000; i++)
        {
            long key = random.Next(50_000);
            switch (random.Next(6))
            {
                case 0: Assert.Equal(model.TryAdd(key, Payload.Of(i)), map.TryAdd(key, Payload.Of(i))); break;
                case 1: model[key] = Payload.Of(-i); map[key] = Payload.Of(-i); break;
                case 2:
                    Assert.Equal(model.Remove(key, out var expected), map.Remove(key, out var removed));
                    Assert.Equal(expected, removed);
                    break;
                case 3: Assert.Equal(model.Remove(key), map.Remove(key)); break;
                default:
                    Assert.Equal(model.TryGetValue(key, out var want), map.TryGetValue(key, out var got));
                    Assert.Equal(want, got);
                    Assert.Equal(model.ContainsKey(key), map.ContainsKey(key));
                    break;
            }
            Assert.Equal(model.Count, map.Count);
        }
        Assert.Equal(model.OrderBy(e => e.Key), map.Entries().OrderBy(e => e.Key));
    }

    [Fact]
    public void Indexer_get_of_a_missing_key_throws_KeyNotFoundException_naming_it()
    {
        using var map = Create();
        map[1] = Payload.Of(1);
        var e = Assert.Throws<KeyNotFoundException>(() => map[2]);
        Assert.Contains("'2'", e.Message, StringComparison.Ordinal);
        Assert.Equal(Payload.Of(1), map[1]);
    }

    [Fact]
    public void Enumeration_sees_every_entry_once_at_a_million_entries()
    {
        using var map = Create();
        for (long k = 0; k < 1_000_000; k++) Assert.True(map.TryAdd(k * 7919, Payload.Of(k)));
        var seen = new HashSet<long>();
        foreach (var e in map.Entries())
        {
            Assert.True(seen.Add(e.Key), $"key {e.Key} seen twice");
            Assert.Equal(Payload.Of(e.Key / 7919), e.Value);
        }
        Assert.Equal(1_000_000, seen.Count);
    }

    [Fact]
    public void Sequential_and_Guid_like_keys_stay_in_short_chains()
    {
        using var map = Create();
        for (long k = 0; k < 300_000; k++) map[k] = Payload.Of(k);
        for (long k = 0; k < 300_000; k++) Assert.True(map.TryGetValue(k, out var v) && v.A == k);
        // Every entry found and no more than ~25% above the primary slots' bytes: a poor spread would need overflow buckets.
        Assert.InRange(map.NativeBytes / (double)map.Count, 32, 1.1 * 61.8);
    }

    [Fact]
    public void Native_bytes_per_entry_stay_within_1_1x_of_Dictionary_at_1M_and_peak_growth_is_the_final_size()
    {
        using var map = Create();
        long peak = 0;
        for (long k = 0; k < 1_000_000; k++)
        {
            map[k] = Payload.Of(k);
            if ((k & 1023) == 0) peak = Math.Max(peak, map.NativeBytes);
        }
        // Dictionary<long, 24-byte struct> at 1M entries: 1,403,641 buckets and entries of 4 + 40 bytes = 61.8 B per entry,
        // and during its last resize the old arrays are alive beside the new ones (about 1.5x that).
        double perEntry = map.NativeBytes / 1_000_000.0;
        Assert.True(perEntry <= 1.1 * 61.8, $"{perEntry:F1} B per entry");
        Assert.True(Math.Max(peak, map.NativeBytes) <= map.NativeBytes + 256 * 1024, $"peak {peak} against final {map.NativeBytes}");
    }

    [Fact]
    public void Clear_empties_the_map_and_gives_the_memory_back()
    {
        using var map = Create();
        for (long k = 0; k < 200_000; k++) map[k] = Payload.Of(k);
        long full = map.NativeBytes;
        map.Clear();
        Assert.Equal(0, map.Count);
        Assert.False(map.ContainsKey(5));
        Assert.True(map.NativeBytes < full / 100, $"{map.NativeBytes} bytes after Clear, {full} before");
        map[5] = Payload.Of(5);
        Assert.Equal(Payload.Of(5), map[5]);
    }

    [Fact]
    public void Every_member_throws_ObjectDisposedException_after_Dispose()
    {
        var map = Create(new NativeMapOptions<long> { Name = "orders" });
        map[1] = Payload.Of(1);
        map.Dispose();
        map.Dispose(); // idempotent
        var e = Assert.Throws<ObjectDisposedException>(() => map.TryGetValue(1, out _));
        Assert.Contains("'orders'", e.Message, StringComparison.Ordinal);
        Assert.Throws<ObjectDisposedException>(() => map.TryAdd(2, default));
        Assert.Throws<ObjectDisposedException>(() => map[1]);
        Assert.Throws<ObjectDisposedException>(() => map[1] = default);
        Assert.Throws<ObjectDisposedException>(() => map.ContainsKey(1));
        Assert.Throws<ObjectDisposedException>(() => map.Remove(1));
        Assert.Throws<ObjectDisposedException>(() => map.Remove(1, out _));
        Assert.Throws<ObjectDisposedException>(() => map.Count);
        Assert.Throws<ObjectDisposedException>(map.Clear);
        Assert.Throws<ObjectDisposedException>(() => map.Entries());
        Assert.Equal(0, map.NativeBytes);
    }

    [Fact]
    public void An_initial_capacity_avoids_the_splits_and_a_negative_one_is_refused()
    {
        using var map = Create(new NativeMapOptions<long> { InitialCapacity = 100_000 });
        long before = map.NativeBytes;
        for (long k = 0; k < 100_000; k++) map[k] = Payload.Of(k);
        Assert.True(map.NativeBytes <= before * 1.2, $"{before} at construction, {map.NativeBytes} with 100,000 entries");
        var refused = Assert.Throws<ArgumentOutOfRangeException>(() => Create(new NativeMapOptions<long> { InitialCapacity = -1, Name = "orders" }));
        Assert.Equal("options.InitialCapacity", refused.ParamName); // the option, as NativeCache names its options
        Assert.Contains("'orders'", refused.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_hasher_is_used_and_even_a_constant_one_gives_right_answers()
    {
        int calls = 0;
        using var map = Create(new NativeMapOptions<long> { Hasher = k => { Interlocked.Increment(ref calls); return 42; } });
        for (long k = 0; k < 500; k++) Assert.True(map.TryAdd(k, Payload.Of(k)));
        for (long k = 0; k < 500; k++) Assert.Equal(Payload.Of(k), map[k]);
        Assert.True(map.Remove(250));
        Assert.False(map.ContainsKey(250));
        // The reads' out-of-line path for a caller's hasher: hits, a miss's default value, the indexer's miss.
        for (long k = 0; k < 500; k++)
        {
            Assert.Equal(k != 250, map.TryGetValue(k, out var value));
            Assert.Equal(k != 250 ? Payload.Of(k) : default, value);
        }
        Assert.Throws<KeyNotFoundException>(() => map[250]);
        Assert.Equal(499, map.Count);
        Assert.True(calls >= 1500);
    }

    [Fact]
    public void Out_of_native_memory_throws_OutOfMemoryException_and_leaves_the_entries_unchanged()
    {
        using var map = Create();
        var table = Table(map);
        for (long k = 0; k < 10_000; k++) map[k] = Payload.Of(k);
        table.AllocationBudget = map.NativeBytes; // nothing more may be allocated
        int added = 0;
        long k2 = 10_000;
        OutOfMemoryException? oom = null;
        for (; k2 < 200_000; k2++)
        {
            try
            {
                map[k2] = Payload.Of(k2);
                added++;
            }
            catch (OutOfMemoryException e)
            {
                oom = e;
                break;
            }
        }
        Assert.NotNull(oom);
        Assert.Contains("unchanged", oom!.Message, StringComparison.Ordinal);
        Assert.Equal(10_000 + added, map.Count);
        Assert.False(map.ContainsKey(k2));
        for (long k = 0; k < k2; k++) Assert.Equal(Payload.Of(k), map[k]);
        table.AllocationBudget = long.MaxValue;
        map[k2] = Payload.Of(k2);
        Assert.Equal(Payload.Of(k2), map[k2]);
    }

    private static NativeHashTable<long, Payload> Table(IMapUnderTest map) => map switch
    {
        PlainMap p => p.Map.Table,
        SharedMap s => s.Map.WriterTable,
        _ => throw new ArgumentException("unknown map"),
    };

    [Fact]
    public void Inserts_lookups_and_removes_allocate_nothing_after_warm_up()
    {
        using var map = Create();
        for (long k = 0; k < 1000; k++) map[k] = Payload.Of(k);
        long next = 1000;
        long bytes = Allocations.OnThisThread(() =>
        {
            for (int i = 0; i < 100_000; i++)
            {
                map.TryAdd(next, Payload.Of(next));
                map.TryGetValue(next - 500, out _);
                map[next - 10] = Payload.Of(1);
                if ((i & 3) == 0) map.Remove(next - 900);
                next++;
            }
        });
        Assert.Equal(0, bytes);
    }
}

public sealed class NativeMapContractTests : MapContractTests
{
    protected override IMapUnderTest Create(NativeMapOptions<long>? options = null) => new PlainMap(new NativeMap<long, Payload>(options));
}

public sealed class ConcurrentNativeMapContractTests : MapContractTests
{
    protected override IMapUnderTest Create(NativeMapOptions<long>? options = null) => new SharedMap(new ConcurrentNativeMap<long, Payload>(options));
}
