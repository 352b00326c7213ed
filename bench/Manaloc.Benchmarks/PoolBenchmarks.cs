using System.Collections.Concurrent;
using BenchmarkDotNet.Attributes;
using Manaloc.Pooling;
using Microsoft.Extensions.ObjectPool;

namespace Manaloc.Benchmarks;

/// <summary>
/// One rent/return pair on one thread: Manaloc's pools beside the anchors. Anchor: Microsoft.Extensions.ObjectPool's
/// DefaultObjectPool. Thread scaling (the 2-thread targets) is measured by the lab's <c>pool-scaling</c> experiment.
/// </summary>
[MemoryDiagnoser]
public class PoolBenchmarks
{
    private readonly DefaultObjectPool<Payload> _default = new(new DefaultPooledObjectPolicy<Payload>());
    private readonly LockedPool<Payload> _locked = new(PoolPolicies.New<Payload>(), new PoolOptions { Name = "bench.locked" });
    private readonly SemiLocalPool<Payload> _semiLocal = new(PoolPolicies.New<Payload>(), new PoolOptions { Name = "bench.semi-local" });
    private readonly SemiLocalPool<Payload> _category;
    private readonly CategorizedPool<Payload> _categorized = new(PoolPolicies.New<Payload>(), new PoolOptions { Name = "bench.categorized" });
    private readonly ConcurrentBag<Payload> _bag = [];

    /// <summary>Creates the pools.</summary>
    public PoolBenchmarks() => _category = _categorized.Category("bench");

    /// <summary>Anchor.</summary>
    [Benchmark(Baseline = true)]
    public long DefaultObjectPool()
    {
        var o = _default.Get();
        o.Value++;
        _default.Return(o);
        return o.Value;
    }

    /// <summary>Allocation instead of pooling.</summary>
    [Benchmark]
    public long New() => new Payload { Value = 1 }.Value;

    /// <summary>One stack under one lock.</summary>
    [Benchmark]
    public long LockedPool()
    {
        var o = _locked.Rent();
        o.Value++;
        _locked.Return(o);
        return o.Value;
    }

    /// <summary>Thread stack over a shared tier.</summary>
    [Benchmark]
    public long SemiLocalPool()
    {
        var o = _semiLocal.Rent();
        o.Value++;
        _semiLocal.Return(o);
        return o.Value;
    }

    /// <summary>A category looked up by name each time.</summary>
    [Benchmark]
    public long CategorizedPoolByName()
    {
        var o = _categorized.Rent("bench");
        o.Value++;
        _categorized.Return("bench", o);
        return o.Value;
    }

    /// <summary>A category held by the caller (as hot paths should).</summary>
    [Benchmark]
    public long CategorizedPoolHeld()
    {
        var o = _category.Rent();
        o.Value++;
        _category.Return(o);
        return o.Value;
    }

    /// <summary>The runtime's work-stealing bag used as a pool.</summary>
    [Benchmark]
    public long ConcurrentBag()
    {
        if (!_bag.TryTake(out var o)) o = new Payload();
        o.Value++;
        _bag.Add(o);
        return o.Value;
    }

    /// <summary>The pooled object.</summary>
    public sealed class Payload
    {
        /// <summary>Touched each use.</summary>
        public long Value;
    }
}
