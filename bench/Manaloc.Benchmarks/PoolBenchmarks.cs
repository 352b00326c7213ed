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
        long result = o.Value; // read before the Return: the pool may hand it out again
        _default.Return(o);
        return result;
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
        long result = o.Value; // read before the Return: the pool may hand it out again
        _locked.Return(o);
        return result;
    }

    /// <summary>Thread stack over a shared tier.</summary>
    [Benchmark]
    public long SemiLocalPool()
    {
        var o = _semiLocal.Rent();
        o.Value++;
        long result = o.Value; // read before the Return: the pool may hand it out again
        _semiLocal.Return(o);
        return result;
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
        long result = o.Value; // read before the Return: the pool may hand it out again
        _category.Return(o);
        return result;
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

/// <summary>
/// What the double-return scan costs: each pool with the scan beside the same pool built without it (an
/// internal switch): a burst of <see cref="Held"/> + 1 rents then as many returns, so the later returns
/// of a burst scan deeper stacks (0: the plain rent/return pair). Each pool's own (inlinable) Rent and Return.
/// </summary>
[MemoryDiagnoser]
[GroupBenchmarksBy(BenchmarkDotNet.Configs.BenchmarkLogicalGroupRule.ByCategory)]
[BenchmarkCategory("double-return")]
public class PoolDoubleReturnCheckBenchmarks
{
    private readonly SemiLocalPool<PoolBenchmarks.Payload> _semi = new(PoolPolicies.New<PoolBenchmarks.Payload>(), new PoolOptions { Name = "bench.semi.checked" });
    private readonly SemiLocalPool<PoolBenchmarks.Payload> _semiUnchecked = new(PoolPolicies.New<PoolBenchmarks.Payload>(), new PoolOptions { Name = "bench.semi.unchecked" }, register: true, DuplicateReturns.Unchecked);
    private readonly LockedPool<PoolBenchmarks.Payload> _locked = new(PoolPolicies.New<PoolBenchmarks.Payload>(), new PoolOptions { Name = "bench.locked.checked" });
    private readonly LockedPool<PoolBenchmarks.Payload> _lockedUnchecked = new(PoolPolicies.New<PoolBenchmarks.Payload>(), new PoolOptions { Name = "bench.locked.unchecked" }, DuplicateReturns.Unchecked);
    private PoolBenchmarks.Payload[] _held = [];

    /// <summary>Objects rented and returned per burst besides one: 0 is the plain rent/return pair.</summary>
    [Params(0, 15, 63)]
    public int Held { get; set; }

    /// <summary>Sizes the burst buffer.</summary>
    [GlobalSetup]
    public void Setup() => _held = new PoolBenchmarks.Payload[Held + 1];

    /// <summary>Without the scan (the baseline of its category).</summary>
    [Benchmark(Baseline = true), BenchmarkCategory("SemiLocalPool")]
    public long SemiLocalUnchecked() => BurstSemi(_semiUnchecked);

    /// <summary>With the scan.</summary>
    [Benchmark, BenchmarkCategory("SemiLocalPool")]
    public long SemiLocalChecked() => BurstSemi(_semi);

    /// <summary>Without the scan (the baseline of its category).</summary>
    [Benchmark(Baseline = true), BenchmarkCategory("LockedPool")]
    public long LockedUnchecked() => BurstLocked(_lockedUnchecked);

    /// <summary>With the scan.</summary>
    [Benchmark, BenchmarkCategory("LockedPool")]
    public long LockedChecked() => BurstLocked(_locked);

    private long BurstSemi(SemiLocalPool<PoolBenchmarks.Payload> pool)
    {
        var held = _held;
        long sum = 0;
        for (int i = 0; i < held.Length; i++) held[i] = pool.Rent();
        for (int i = 0; i < held.Length; i++)
        {
            sum += ++held[i].Value;
            pool.Return(held[i]);
        }
        return sum;
    }

    private long BurstLocked(LockedPool<PoolBenchmarks.Payload> pool)
    {
        var held = _held;
        long sum = 0;
        for (int i = 0; i < held.Length; i++) held[i] = pool.Rent();
        for (int i = 0; i < held.Length; i++)
        {
            sum += ++held[i].Value;
            pool.Return(held[i]);
        }
        return sum;
    }
}
