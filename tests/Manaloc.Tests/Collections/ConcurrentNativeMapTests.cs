using System.Collections.Concurrent;
using Manaloc.Collections;

namespace Manaloc.Tests.Collections;

public sealed class ConcurrentNativeMapTests
{
    [Fact]
    public void GetOrAdd_AddOrUpdate_TryUpdate_and_TryRemove_answer_as_ConcurrentDictionary()
    {
        using var map = new ConcurrentNativeMap<long, long>();
        var model = new ConcurrentDictionary<long, long>();
        var random = new Random(11);
        for (int i = 0; i < 100_000; i++)
        {
            long key = random.Next(2_000), v = random.Next(100);
            switch (random.Next(8))
            {
                case 0: Assert.Equal(model.GetOrAdd(key, v), map.GetOrAdd(key, v)); break;
                case 1: Assert.Equal(model.GetOrAdd(key, k => k + v), map.GetOrAdd(key, k => k + v)); break;
                case 2: Assert.Equal(model.GetOrAdd(key, (k, a) => k * a, v), map.GetOrAdd(key, (k, a) => k * a, v)); break;
                case 3: Assert.Equal(model.AddOrUpdate(key, v, (_, old) => old + 1), map.AddOrUpdate(key, v, (_, old) => old + 1)); break;
                case 4: Assert.Equal(model.AddOrUpdate(key, k => -k, (_, old) => old * 2 % 1000), map.AddOrUpdate(key, k => -k, (_, old) => old * 2 % 1000)); break;
                case 5: Assert.Equal(model.TryUpdate(key, v, v % 3), map.TryUpdate(key, v, v % 3)); break;
                case 6:
                    Assert.Equal(model.TryRemove(key, out var a), map.TryRemove(key, out var b));
                    Assert.Equal(a, b);
                    break;
                default: Assert.Equal(model.TryRemove(new KeyValuePair<long, long>(key, v)), map.TryRemove(new KeyValuePair<long, long>(key, v))); break;
            }
            Assert.Equal(model.Count, map.Count);
        }
        Assert.Equal(model.OrderBy(e => e.Key), map.OrderBy(e => e.Key));
        Assert.Equal(model.IsEmpty, map.IsEmpty);
    }

    [Fact]
    public void Null_factories_throw_ArgumentNullException()
    {
        using var map = new ConcurrentNativeMap<long, long>();
        Assert.Throws<ArgumentNullException>(() => map.GetOrAdd(1, (Func<long, long>)null!));
        Assert.Throws<ArgumentNullException>(() => map.AddOrUpdate(1, 1, null!));
        Assert.Throws<ArgumentNullException>(() => map.AddOrUpdate(1, null!, (_, v) => v));
        Assert.Equal(0, map.Count);
    }

    [Fact]
    public async Task Readers_never_see_a_torn_value_nor_lose_an_entry_while_writers_grow_update_and_remove()
    {
        using var map = new ConcurrentNativeMap<long, Payload>();
        const long stable = 20_000;
        for (long k = 0; k < stable; k++) map[k] = Payload.Of(k);
        using var stop = new CancellationTokenSource();
        var failures = new ConcurrentQueue<string>();
        long reads = 0;
        var readers = Enumerable.Range(0, 2).Select(r => Task.Run(() =>
        {
            var random = new Random(r);
            while (!stop.IsCancellationRequested)
            {
                long key = random.NextInt64(stable);
                // Stable keys are never removed: a miss is a lost entry; an unequal triple is a torn value.
                if (!map.TryGetValue(key, out var v)) failures.Enqueue($"lost {key}");
                else if (!v.IsWhole || Math.Abs(v.A) % stable != key) failures.Enqueue($"torn {key}: {v}");
                if (map.TryGetValue(stable + random.NextInt64(200_000), out var w) && !w.IsWhole) failures.Enqueue($"torn churn value {w}");
                Interlocked.Increment(ref reads);
            }
        })).ToArray();
        var writer = Task.Run(() =>
        {
            var random = new Random(99);
            for (long i = 0; i < 300_000; i++)
            {
                long key = random.NextInt64(stable);
                map[key] = Payload.Of(random.Next(2) == 0 ? key : key + stable * random.Next(1, 1000)); // updates of stable keys
                map.TryAdd(stable + i, Payload.Of(i));                                                  // growth: splits all along
                if (i % 3 == 0) map.TryRemove(stable + i / 2, out _);                                   // churn
            }
        });
        await writer;
        stop.Cancel();
        await Task.WhenAll(readers);
        Assert.Empty(failures);
        Assert.True(reads > 1000);
    }

    [Fact]
    public async Task An_enumeration_during_growth_sees_no_entry_twice_and_every_entry_present_throughout()
    {
        using var map = new ConcurrentNativeMap<long, long>();
        const long stable = 50_000;
        for (long k = 0; k < stable; k++) map[k] = k;
        var writer = Task.Run(() =>
        {
            for (long k = stable; k < 400_000; k++)
            {
                map[k] = k;
                if (k % 2 == 0 && k - 1 > stable) map.TryRemove(k - 1, out _); // churn above the stable keys only
            }
        });
        int rounds = 0;
        do
        {
            var seen = new HashSet<long>();
            foreach (var e in map)
            {
                Assert.True(seen.Add(e.Key), $"key {e.Key} seen twice");
                Assert.Equal(e.Key, e.Value);
            }
            for (long k = 0; k < stable; k++) Assert.Contains(k, seen);
            rounds++;
        }
        while (!writer.IsCompleted || rounds < 2);
        await writer;
    }

    [Fact]
    public async Task Dispose_racing_reads_makes_each_read_return_the_right_answer_or_throw_ObjectDisposedException()
    {
        for (int attempt = 0; attempt < 30; attempt++)
        {
            var map = new ConcurrentNativeMap<long, Payload>();
            for (long k = 0; k < 20_000; k++) map[k] = Payload.Of(k);
            using var start = new Barrier(3);
            var failures = new ConcurrentQueue<Exception>();
            var readers = Enumerable.Range(0, 2).Select(r => Task.Run(() =>
            {
                start.SignalAndWait();
                var random = new Random(r);
                try
                {
                    while (true)
                    {
                        long key = random.NextInt64(20_000);
                        // Every key stays until Dispose: a miss is as wrong as a torn or zeroed value (a released table
                        // reads as zeros, which are a miss unless the read sees the table released and throws).
                        if (!map.TryGetValue(key, out var v) || v != Payload.Of(key)) failures.Enqueue(new InvalidOperationException($"wrong answer {v} for {key}"));
                        if (!map.ContainsKey(random.NextInt64(20_000))) failures.Enqueue(new InvalidOperationException("a present key reported absent"));
                        foreach (var e in map)
                        {
                            if (e.Value != Payload.Of(e.Key)) failures.Enqueue(new InvalidOperationException($"wrong value in enumeration {e}"));
                            break;
                        }
                    }
                }
                catch (ObjectDisposedException)
                {
                }
                catch (Exception e)
                {
                    failures.Enqueue(e);
                }
            })).ToArray();
            start.SignalAndWait();
            Thread.SpinWait(attempt * 500);
            map.Dispose();
            await Task.WhenAll(readers);
            Assert.Empty(failures);
        }
    }

    [Fact]
    public async Task Clear_racing_reads_makes_each_read_return_the_old_whole_value_or_a_miss_never_a_torn_or_zero_one()
    {
        // Payload.Of(key) for keys from 1: a zeroed value (a page released under the read) is never right.
        using var map = new ConcurrentNativeMap<long, Payload>();
        using var stop = new CancellationTokenSource();
        var failures = new ConcurrentQueue<string>();
        var readers = Enumerable.Range(0, 2).Select(r => Task.Run(() =>
        {
            var random = new Random(r);
            while (!stop.IsCancellationRequested)
            {
                long key = 1 + random.NextInt64(10_000);
                if (map.TryGetValue(key, out var v) && v != Payload.Of(key)) failures.Enqueue($"{key}: {v}");
                if (r == 1)
                {
                    int seen = 0;
                    foreach (var e in map)
                    {
                        if (e.Key < 1 || e.Value != Payload.Of(e.Key)) failures.Enqueue($"enumerated {e}");
                        if (++seen == 64) break;
                    }
                }
            }
        })).ToArray();
        for (int round = 0; round < 50; round++)
        {
            for (long k = 1; k <= 10_000; k++) map[k] = Payload.Of(k);
            map.Clear();
            Assert.Equal(0, map.Count);
        }
        stop.Cancel();
        await Task.WhenAll(readers);
        Assert.Empty(failures);
    }

    [Fact]
    public void A_hasher_that_throws_during_a_split_leaves_the_map_as_it_was_and_readable()
    {
        // A split makes both chains' sequences odd while it moves entries: a hasher that threw there left them odd, and
        // every later read of those chains spun for ever (the reads below would hang), besides losing or doubling entries.
        var throwOnce = new HashSet<long>();
        using var map = new ConcurrentNativeMap<long, long>(new NativeMapOptions<long> { Hasher = k => throwOnce.Remove(k) ? throw new InvalidOperationException("hasher") : (ulong)k });
        var model = new Dictionary<long, long>();
        for (long k = 0; k < 100; k++) { map[k] = k; model[k] = k; }
        throwOnce.UnionWith([5, 17, 33, 40, 41, 42, 43, 44, 60, 99]);
        int threw = 0;
        for (long k = 100; k < 5000; k++)
        {
            try { map[k] = k; model[k] = k; }
            catch (InvalidOperationException) { threw++; }
        }
        Assert.Equal(10, threw);
        Assert.Equal(model.Count, map.Count);
        foreach (var (k, v) in model) Assert.True(map.TryGetValue(k, out long got) && got == v, $"key {k}");
        var seen = new Dictionary<long, long>();
        foreach (var e in map) Assert.True(seen.TryAdd(e.Key, e.Value), $"key {e.Key} enumerated twice");
        Assert.Equal(model, seen);
    }

    [Fact]
    public void Concurrent_writers_on_disjoint_keys_lose_nothing()
    {
        using var map = new ConcurrentNativeMap<long, long>();
        Parallel.For(0, 4, w =>
        {
            for (long k = w; k < 400_000; k += 4)
            {
                Assert.True(map.TryAdd(k, k));
                if (k % 5 == 0) Assert.True(map.TryRemove(k, out long v) && v == k);
            }
        });
        Assert.Equal(400_000 - 80_000, map.Count);
        for (long k = 0; k < 400_000; k++) Assert.Equal(k % 5 != 0, map.ContainsKey(k));
    }

    [Fact]
    public void Reads_allocate_nothing_and_enumeration_allocates_nothing_after_warm_up()
    {
        using var map = new ConcurrentNativeMap<long, Payload>();
        for (long k = 0; k < 10_000; k++) map[k] = Payload.Of(k);
        long sum = 0;
        long bytes = Allocations.OnThisThread(() =>
        {
            for (long k = 0; k < 100_000; k++)
            {
                if (map.TryGetValue(k % 12_000, out var v)) sum += v.A;
                map.GetOrAdd(k % 12_000, Payload.Of(k % 12_000));
            }
            foreach (var e in map) sum += e.Key;
        });
        Assert.Equal(0, bytes);
        Assert.True(sum > 0);
    }

    [Fact]
    public void The_inlined_read_loads_the_current_table_without_a_hasher_and_none_with_one_across_Clear_and_Dispose()
    {
        // The inlined read hashes with the default: a map with a hasher must never offer it a table (its keys sit in the
        // hasher's buckets, so a default-hash probe would report them absent), and a map without one must offer the table
        // Clear made (the old one is released: reads through it would all retry).
        using var plain = new ConcurrentNativeMap<long, long>();
        using var hashed = new ConcurrentNativeMap<long, long>(new NativeMapOptions<long> { Hasher = k => (ulong)k * 31 });
        Assert.Same(plain.WriterTable, plain.InlineReadTable);
        Assert.Null(hashed.InlineReadTable);
        for (long k = 0; k < 5_000; k++)
        {
            plain.TryAdd(k, k);
            hashed.TryAdd(k, k);
        }
        plain.Clear();
        hashed.Clear();
        Assert.Same(plain.WriterTable, plain.InlineReadTable);
        Assert.Null(hashed.InlineReadTable);
        for (long k = 0; k < 5_000; k++)
        {
            plain.TryAdd(k, -k);
            hashed.TryAdd(k, -k);
        }
        for (long k = 0; k < 5_000; k++)
        {
            Assert.True(plain.TryGetValue(k, out long a));
            Assert.Equal(-k, a);
            Assert.True(hashed.TryGetValue(k, out long b));
            Assert.Equal(-k, b);
        }
        plain.Dispose();
        hashed.Dispose();
        Assert.Null(plain.InlineReadTable);
        Assert.Throws<ObjectDisposedException>(() => plain.TryGetValue(1, out _));
        Assert.Throws<ObjectDisposedException>(() => hashed.TryGetValue(1, out _));
    }
}
