using System.Collections.Concurrent;
using CsCheck;
using Manaloc.Collections;

namespace Manaloc.Concurrency.Tests.Properties;

/// <summary>
/// NativeMap against Dictionary and ConcurrentNativeMap against ConcurrentDictionary: random operation sequences
/// must give the same answers (every return value and out value, and the final contents); in parallel, the
/// concurrent map must be linearizable (CsCheck's SampleParallel); and at a few million entries, from several
/// threads, the answers must still match the BCL's.
/// </summary>
public sealed class NativeMapModelTests
{
    /// <summary>The answers one side gave, op by op, and its map.</summary>
    public sealed class Side(IDictionaryLike map) : IDisposable
    {
        public readonly IDictionaryLike Map = map;
        public readonly List<string> Answers = [];
        public void Dispose() => Map.Dispose();
        public override string ToString() => $"{Map.Count} entries, last answers [{string.Join("; ", Answers.TakeLast(3))}]";
    }

    /// <summary>What both a BCL dictionary and a native map are driven through.</summary>
    public interface IDictionaryLike : IDisposable
    {
        int Count { get; }
        bool TryAdd(long key, long value);
        bool TryGetValue(long key, out long value);
        void Set(long key, long value);
        bool Remove(long key, out long value);
        long AddOrUpdate(long key, long add, long delta);
        long GetOrAdd(long key, long value);
        bool TryUpdate(long key, long value, long comparison);
        void Clear();
        IEnumerable<KeyValuePair<long, long>> Entries { get; }
    }

    private sealed class Bcl(Dictionary<long, long> d) : IDictionaryLike
    {
        public int Count => d.Count;
        public bool TryAdd(long key, long value) => d.TryAdd(key, value);
        public bool TryGetValue(long key, out long value) => d.TryGetValue(key, out value);
        public void Set(long key, long value) => d[key] = value;
        public bool Remove(long key, out long value) => d.Remove(key, out value);
        public long AddOrUpdate(long key, long add, long delta) => d[key] = d.TryGetValue(key, out long v) ? v + delta : add;
        public long GetOrAdd(long key, long value) => d.TryGetValue(key, out long v) ? v : d[key] = value;
        public bool TryUpdate(long key, long value, long comparison)
        {
            if (!d.TryGetValue(key, out long v) || v != comparison) return false;
            d[key] = value;
            return true;
        }
        public void Clear() => d.Clear();
        public IEnumerable<KeyValuePair<long, long>> Entries => d;
        public void Dispose() { }
    }

    private sealed class BclConcurrent(ConcurrentDictionary<long, long> d) : IDictionaryLike
    {
        public int Count => d.Count;
        public bool TryAdd(long key, long value) => d.TryAdd(key, value);
        public bool TryGetValue(long key, out long value) => d.TryGetValue(key, out value);
        public void Set(long key, long value) => d[key] = value;
        public bool Remove(long key, out long value) => d.TryRemove(key, out value);
        public long AddOrUpdate(long key, long add, long delta) => d.AddOrUpdate(key, add, (_, v) => v + delta);
        public long GetOrAdd(long key, long value) => d.GetOrAdd(key, value);
        public bool TryUpdate(long key, long value, long comparison) => d.TryUpdate(key, value, comparison);
        public void Clear() => d.Clear();
        public IEnumerable<KeyValuePair<long, long>> Entries => d;
        public void Dispose() { }
    }

    private sealed class Plain(NativeMap<long, long> m) : IDictionaryLike
    {
        public int Count => m.Count;
        public bool TryAdd(long key, long value) => m.TryAdd(key, value);
        public bool TryGetValue(long key, out long value) => m.TryGetValue(key, out value);
        public void Set(long key, long value) => m[key] = value;
        public bool Remove(long key, out long value) => m.Remove(key, out value);
        public long AddOrUpdate(long key, long add, long delta)
        {
            ref long v = ref m.GetValueRefOrAddDefault(key, out bool exists);
            return v = exists ? v + delta : add;
        }
        public long GetOrAdd(long key, long value)
        {
            ref long v = ref m.GetValueRefOrAddDefault(key, out bool exists);
            if (!exists) v = value;
            return v;
        }
        public bool TryUpdate(long key, long value, long comparison)
        {
            ref long v = ref m.GetValueRefOrNullRef(key);
            if (System.Runtime.CompilerServices.Unsafe.IsNullRef(ref v) || v != comparison) return false;
            v = value;
            return true;
        }
        public void Clear() => m.Clear();
        public IEnumerable<KeyValuePair<long, long>> Entries => m;
        public void Dispose() => m.Dispose();
    }

    private sealed class Shared(ConcurrentNativeMap<long, long> m) : IDictionaryLike
    {
        public int Count => m.Count;
        public bool TryAdd(long key, long value) => m.TryAdd(key, value);
        public bool TryGetValue(long key, out long value) => m.TryGetValue(key, out value);
        public void Set(long key, long value) => m[key] = value;
        public bool Remove(long key, out long value) => m.TryRemove(key, out value);
        public long AddOrUpdate(long key, long add, long delta) => m.AddOrUpdate(key, add, (_, v) => v + delta);
        public long GetOrAdd(long key, long value) => m.GetOrAdd(key, value);
        public bool TryUpdate(long key, long value, long comparison) => m.TryUpdate(key, value, comparison);
        public void Clear() => m.Clear();
        public IEnumerable<KeyValuePair<long, long>> Entries => m;
        public void Dispose() => m.Dispose();
    }

    private static GenOperation<Side, Side>[] Operations(long keys)
    {
        GenOperation<Side, Side> Op<T>(Gen<T> gen, Func<T, string> name, Func<IDictionaryLike, T, string> apply)
            => gen.Operation<Side, Side>(name, (a, t) => a.Answers.Add(apply(a.Map, t)), (m, t) => m.Answers.Add(apply(m.Map, t)));
        var key = Gen.Long[0, keys];
        var pair = Gen.Select(key, Gen.Long[-5, 5]);
        return
        [
            Op(pair, t => $"TryAdd({t.Item1}, {t.Item2})", (d, t) => d.TryAdd(t.Item1, t.Item2).ToString()),
            Op(pair, t => $"Set({t.Item1}, {t.Item2})", (d, t) => { d.Set(t.Item1, t.Item2); return ""; }),
            Op(key, k => $"TryGetValue({k})", (d, k) => $"{d.TryGetValue(k, out long v)} {v}"),
            Op(key, k => $"Remove({k})", (d, k) => $"{d.Remove(k, out long v)} {v}"),
            Op(pair, t => $"AddOrUpdate({t.Item1}, {t.Item2})", (d, t) => d.AddOrUpdate(t.Item1, t.Item2, 1).ToString()),
            Op(pair, t => $"GetOrAdd({t.Item1}, {t.Item2})", (d, t) => d.GetOrAdd(t.Item1, t.Item2).ToString()),
            Op(pair, t => $"TryUpdate({t.Item1}, 9, {t.Item2})", (d, t) => d.TryUpdate(t.Item1, 9, t.Item2).ToString()),
            Op(Gen.Int[0, 40], i => "Clear (1 in 40)", (d, i) => { if (i == 0) d.Clear(); return d.Count.ToString(); }),
        ];
    }

    private static bool Agree(Side actual, Side model)
        => actual.Answers.SequenceEqual(model.Answers)
           && actual.Map.Count == model.Map.Count
           && actual.Map.Entries.OrderBy(e => e.Key).SequenceEqual(model.Map.Entries.OrderBy(e => e.Key));

    [Fact]
    public void NativeMap_answers_as_Dictionary()
        => Gen.Const(0).Select(_ => (new Side(new Plain(new NativeMap<long, long>())), new Side(new Bcl(new Dictionary<long, long>()))))
            .SampleModelBased(Operations(200), Agree, iter: PoolModelTests.Iterations);

    [Fact]
    public void ConcurrentNativeMap_answers_as_ConcurrentDictionary()
        => Gen.Const(0).Select(_ => (new Side(new Shared(new ConcurrentNativeMap<long, long>())), new Side(new BclConcurrent(new ConcurrentDictionary<long, long>()))))
            .SampleModelBased(Operations(200), Agree, iter: PoolModelTests.Iterations);

    /// <summary>State of the parallel check: the concurrent map.</summary>
    public sealed class SharedState
    {
        public readonly ConcurrentNativeMap<long, long> Map = new();
        public override string ToString() => string.Join(",", Map.OrderBy(e => e.Key).Select(e => $"{e.Key}={e.Value}"));
    }

    [Fact]
    public void ConcurrentNativeMap_operations_in_parallel_are_linearizable()
    {
        var key = Gen.Long[0, 6];
        Gen.Const(0).Select(_ => new SharedState()).SampleParallel(
            [
                key.Operation<SharedState>(k => $"TryAdd({k})", (s, k) => s.Map.TryAdd(k, k)),
                key.Operation<SharedState>(k => $"AddOrUpdate({k})", (s, k) => s.Map.AddOrUpdate(k, 1, (_, v) => v + 10)),
                key.Operation<SharedState>(k => $"TryRemove({k})", (s, k) => s.Map.TryRemove(k, out _)),
                key.Operation<SharedState>(k => $"Set({k})", (s, k) => s.Map[k] = -k),
                key.Operation<SharedState>(k => $"TryUpdate({k})", (s, k) => s.Map.TryUpdate(k, 100, k)),
            ],
            equal: (a, b) => a.ToString() == b.ToString(),
            iter: PoolModelTests.Iterations);
    }

    [Fact]
    public void At_millions_of_entries_from_several_threads_the_answers_match_the_BCL()
    {
        // Each thread owns the keys congruent to its index, so each thread's answers are deterministic and must match
        // the BCL map driven with the same sequence; the native maps grow through millions of entries meanwhile.
        const int threads = 3;
        const int operations = 1_500_000;
        using var shared = new ConcurrentNativeMap<long, long>();
        var bcl = new ConcurrentDictionary<long, long>();
        var mismatches = new ConcurrentQueue<string>();
        Parallel.For(0, threads, new ParallelOptions { MaxDegreeOfParallelism = threads }, t =>
        {
            var random = new Random(1000 + t);
            var native = new Shared(shared);
            var model = new BclConcurrent(bcl);
            for (int i = 0; i < operations; i++)
            {
                long key = random.NextInt64(4_000_000) * threads + t;
                long value = random.Next();
                string a, b;
                switch (random.Next(10))
                {
                    case < 5: a = native.TryAdd(key, value).ToString(); b = model.TryAdd(key, value).ToString(); break;
                    case 5: a = $"{native.Remove(key, out long x)} {x}"; b = $"{model.Remove(key, out long y)} {y}"; break;
                    case 6: a = native.AddOrUpdate(key, value, 1).ToString(); b = model.AddOrUpdate(key, value, 1).ToString(); break;
                    default: a = $"{native.TryGetValue(key, out long p)} {p}"; b = $"{model.TryGetValue(key, out long q)} {q}"; break;
                }
                if (a != b) mismatches.Enqueue($"thread {t} op {i} key {key}: native {a}, bcl {b}");
            }
        });
        Assert.Empty(mismatches.Take(5));
        Assert.Equal(bcl.Count, shared.Count);
        Assert.True(shared.Count > 2_000_000, $"{shared.Count} entries");
        foreach (var e in bcl) Assert.True(shared.TryGetValue(e.Key, out long v) && v == e.Value);

        using var plain = new NativeMap<long, long>();
        var dictionary = new Dictionary<long, long>();
        var rng = new Random(5);
        for (int i = 0; i < 3_000_000; i++)
        {
            long key = rng.NextInt64(3_000_000);
            if (rng.Next(4) == 0)
            {
                Assert.Equal(dictionary.Remove(key, out long x), plain.Remove(key, out long y));
                Assert.Equal(x, y);
            }
            else Assert.Equal(dictionary.TryAdd(key, i), plain.TryAdd(key, i));
        }
        Assert.Equal(dictionary.Count, plain.Count);
        foreach (var e in plain) Assert.Equal(dictionary[e.Key], e.Value);
    }
}
