using System.Collections.Concurrent;
using BenchmarkDotNet.Attributes;
using Manaloc.Collections;

namespace Manaloc.Benchmarks;

/// <summary>The 24-byte value of the maps' benchmarks and lab experiment.</summary>
public readonly record struct MapValue(long A, long B, long C);

/// <summary>
/// Lookups (hits, uniform keys in a shuffled order) and inserts into a map of <see cref="Count"/> entries with
/// <c>long</c> keys and a 24-byte value. Anchors: <c>Dictionary</c> for <see cref="NativeMap{TKey, TValue}"/>,
/// <c>ConcurrentDictionary</c> for <see cref="ConcurrentNativeMap{TKey, TValue}"/>; one thread (the lab measures two).
/// </summary>
[MemoryDiagnoser]
public class NativeMapBenchmarks
{
    private const int Lookups = 1024;

    /// <summary>Entries in each map.</summary>
    [Params(100_000, 1_000_000)]
    public int Count { get; set; }

    private long[] _probe = [];
    private Dictionary<long, MapValue> _dictionary = [];
    private ConcurrentDictionary<long, MapValue> _concurrentDictionary = new();
    private NativeMap<long, MapValue> _map = null!;
    private ConcurrentNativeMap<long, MapValue> _concurrentMap = null!;

    /// <summary>Fills every map with the same keys (sequential ids scaled, as ids are) and a shuffled probe order.</summary>
    [GlobalSetup]
    public void Setup()
    {
        _dictionary = new Dictionary<long, MapValue>();
        _concurrentDictionary = new ConcurrentDictionary<long, MapValue>();
        _map = new NativeMap<long, MapValue>();
        _concurrentMap = new ConcurrentNativeMap<long, MapValue>();
        for (long k = 0; k < Count; k++)
        {
            var v = new MapValue(k, k, k);
            _dictionary[k * 3] = v;
            _concurrentDictionary[k * 3] = v;
            _map[k * 3] = v;
            _concurrentMap[k * 3] = v;
        }
        var random = new Random(42);
        _probe = Enumerable.Range(0, Lookups).Select(_ => random.NextInt64(Count) * 3).ToArray();
    }

    /// <summary>Frees the native maps.</summary>
    [GlobalCleanup]
    public void Cleanup()
    {
        _map.Dispose();
        _concurrentMap.Dispose();
    }

    /// <summary>Anchor: Dictionary lookups.</summary>
    [Benchmark(Baseline = true, OperationsPerInvoke = Lookups)]
    public long DictionaryLookup()
    {
        long sum = 0;
        foreach (long k in _probe)
        {
            if (_dictionary.TryGetValue(k, out var v)) sum += v.B;
        }
        return sum;
    }

    /// <summary>NativeMap lookups.</summary>
    [Benchmark(OperationsPerInvoke = Lookups)]
    public long NativeMapLookup()
    {
        long sum = 0;
        foreach (long k in _probe)
        {
            if (_map.TryGetValue(k, out var v)) sum += v.B;
        }
        return sum;
    }

    /// <summary>Anchor: ConcurrentDictionary lookups.</summary>
    [Benchmark(OperationsPerInvoke = Lookups)]
    public long ConcurrentDictionaryLookup()
    {
        long sum = 0;
        foreach (long k in _probe)
        {
            if (_concurrentDictionary.TryGetValue(k, out var v)) sum += v.B;
        }
        return sum;
    }

    /// <summary>ConcurrentNativeMap lookups (lock-free, validated).</summary>
    [Benchmark(OperationsPerInvoke = Lookups)]
    public long ConcurrentNativeMapLookup()
    {
        long sum = 0;
        foreach (long k in _probe)
        {
            if (_concurrentMap.TryGetValue(k, out var v)) sum += v.B;
        }
        return sum;
    }

    /// <summary>Anchor: filling a Dictionary from empty to 100,000 entries (resizes included).</summary>
    [Benchmark(OperationsPerInvoke = 100_000)]
    public int DictionaryInsert()
    {
        var d = new Dictionary<long, MapValue>();
        for (long k = 0; k < 100_000; k++) d[k] = default;
        return d.Count;
    }

    /// <summary>Filling a NativeMap from empty to 100,000 entries (splits included).</summary>
    [Benchmark(OperationsPerInvoke = 100_000)]
    public int NativeMapInsert()
    {
        using var m = new NativeMap<long, MapValue>();
        for (long k = 0; k < 100_000; k++) m[k] = default;
        return m.Count;
    }

    /// <summary>Anchor: filling a ConcurrentDictionary from empty to 100,000 entries.</summary>
    [Benchmark(OperationsPerInvoke = 100_000)]
    public int ConcurrentDictionaryInsert()
    {
        var d = new ConcurrentDictionary<long, MapValue>();
        for (long k = 0; k < 100_000; k++) d[k] = default;
        return d.Count;
    }

    /// <summary>Filling a ConcurrentNativeMap from empty to 100,000 entries.</summary>
    [Benchmark(OperationsPerInvoke = 100_000)]
    public int ConcurrentNativeMapInsert()
    {
        using var m = new ConcurrentNativeMap<long, MapValue>();
        for (long k = 0; k < 100_000; k++) m[k] = default;
        return m.Count;
    }
}
