using System.Collections.Concurrent;
using Manaloc.Pooling;
using Manaloc.Threading;
using Microsoft.Extensions.ObjectPool;

namespace Manaloc.Lab.Experiments;

/// <summary>
/// Seed 000, "Writing a Semi-Local Object Pool": a fixed total of rent/return pairs split over 1..N
/// threads, for <c>new</c>, the locked pool, the semi-local pool, the categorized pool and two anchors
/// (Microsoft.Extensions.ObjectPool's DefaultObjectPool, ConcurrentBag); then the cross-thread pattern,
/// where most objects are returned on a thread other than their renter's.
/// </summary>
public sealed class PoolScaling() : Experiment(
    "pool-scaling", "Writing a Semi-Local Object Pool (seed 000)",
    "A fixed total of rent/return pairs over 1..2N threads: locked vs semi-local vs categorized pools, new, DefaultObjectPool, ConcurrentBag; plus cross-thread returns.",
    [
        New, Locked, SemiLocal, Categorized, Default, Bag, Locked + UncheckedSuffix,
        SemiLocal + UncheckedSuffix, Locked + CrossSuffix, SemiLocal + CrossSuffix, Default + CrossSuffix
    ], Locked, quickSeconds: 15, sweepParameter: "threads")
{
    private const string New = "new";
    private const string Locked = "LockedPool";
    private const string SemiLocal = "SemiLocalPool";
    private const string Categorized = "CategorizedPool";
    private const string Default = "DefaultObjectPool";
    private const string Bag = "ConcurrentBag";
    private const string CrossSuffix = " (cross-thread)";
    // The same pools built without the double-return scan (an internal switch), to price the scan in this run.
    private const string UncheckedSuffix = " (no double-return check)";

    /// <inheritdoc/>
    public override Claim Claim => new("Chart only: the single-lock pool slows down as processors are added; the semi-local pool keeps scaling (no number published)", null,
        new Metric("SemiLocalPool vs LockedPool throughput at the most threads", Unit.Ratio, f => f.TimesBetter(SemiLocal, Locked, Threads(f.All.Where(m => m.Variant == SemiLocal).Select(m => m.Threads).DefaultIfEmpty(0).Max()))));
    /// <inheritdoc/>
    public override IReadOnlyList<Target> Targets =>
    [
        Target.AtLeast(Metric.TimesBetter("SemiLocalPool vs LockedPool throughput, 2 threads", SemiLocal, Locked, Threads(2)), 3),
        Target.AtLeast(Metric.TimesBetter("SemiLocalPool vs DefaultObjectPool throughput, 2 threads", SemiLocal, Default, Threads(2)), 1.5),
        Target.AtLeast("SemiLocalPool 2 threads vs 1 thread throughput", Unit.Ratio, f => f.Find(SemiLocal, Threads(2)) is { } two && f.Find(SemiLocal, Threads(1)) is { } one ? f.TimesBetter(two, one) : null, 1.7),
        Target.AtMost("SemiLocalPool bytes per rent/return (worst thread count)", Unit.BytesPerOp, f => f.All.Where(m => m.Variant == SemiLocal).Max(m => m.AllocatedBytesPerOp), 0.01),
        // What refusing a same-thread double return costs: each pool against itself built without the check, on one thread,
        // where nothing else (contention, placement) hides it. The table below has every thread count.
        Target.AtLeast(Metric.TimesBetter("SemiLocalPool with the double-return check vs without, 1 thread (at most 5% slower)", SemiLocal, SemiLocal + UncheckedSuffix, Threads(1)), 0.95),
        Target.AtLeast(Metric.TimesBetter("LockedPool with the double-return check vs without, 1 thread (at most 5% slower)", Locked, Locked + UncheckedSuffix, Threads(1)), 0.95),
    ];

    private static Func<Measurement, bool> Threads(int threads) => m => m.Threads == threads;
    /// <inheritdoc/>
    public override Headline Headline => new(
        Metric.TimesBetter("SemiLocalPool vs DefaultObjectPool (Microsoft.Extensions.ObjectPool), rent+return, 2 threads (times as fast)", SemiLocal, Default, Threads(2)),
        Metric.TimesBetter("SemiLocalPool vs new, 2 threads (times as fast)", SemiLocal, New, Threads(2)),
        Metric.TimesBetter("SemiLocalPool vs ConcurrentBag, 2 threads (times as fast)", SemiLocal, Bag, Threads(2)));

    /// <inheritdoc/>
    public override IReadOnlyList<ParameterSpec> DescribeParameters(RunSettings settings) =>
    [
        new("threads", "threads sharing the fixed total of rent/return pairs", settings.ThreadCounts.Select(t => t.ToString(System.Globalization.CultureInfo.InvariantCulture)).ToArray()),
        new("pairs", "rent/return pairs per sample, split evenly over the threads", [TotalPairs(settings).ToString(System.Globalization.CultureInfo.InvariantCulture)]),
    ];

    private static long TotalPairs(RunSettings settings) => settings.Pick(smoke: 4_000, quick: 250_000, full: 4_000_000);

    /// <inheritdoc/>
    public override void Run(ExperimentContext context)
    {
        long total = TotalPairs(context.Settings);
        var threadCounts = context.ThreadCounts;
        int maxThreads = threadCounts.Max();
        var sinks = new Padded<long>[maxThreads + 1]; // one padded slot per thread keeps results observable
        var p = Parameters.Of(("pairs", total));
        var options = new PoolOptions { Name = "lab.pool-scaling", BatchSize = 16, LocalCapacity = 64 };
        LockedPool<Payload> locked = null!, lockedUnchecked = null!;
        SemiLocalPool<Payload> semi = null!, semiUnchecked = null!;
        CategorizedPool<Payload> categorized = null!;
        DefaultObjectPool<Payload> defaultPool = null!;
        ConcurrentBag<Payload> bag = null!;
        // Fresh, empty pools for every measurement: each thread then creates its own objects in its own
        // allocation context. Objects created by one thread lie side by side in memory; handed to two
        // threads, two of them can share a cache line and the measurement shows false sharing, not the pool.
        void Fresh()
        {
            locked?.Dispose();
            semi?.Dispose();
            categorized?.Dispose();
            lockedUnchecked?.Dispose();
            semiUnchecked?.Dispose();
            locked = new LockedPool<Payload>(PoolPolicies.New<Payload>(), options);
            semi = new SemiLocalPool<Payload>(PoolPolicies.New<Payload>(), options);
            lockedUnchecked = new LockedPool<Payload>(PoolPolicies.New<Payload>(), options, DuplicateReturns.Unchecked);
            semiUnchecked = new SemiLocalPool<Payload>(PoolPolicies.New<Payload>(), options, register: true, DuplicateReturns.Unchecked);
            categorized = new CategorizedPool<Payload>(PoolPolicies.New<Payload>(), options);
            defaultPool = new DefaultObjectPool<Payload>(new DefaultPooledObjectPolicy<Payload>(), 64 * maxThreads);
            bag = new ConcurrentBag<Payload>();
        }
        Fresh();
        var bodies = new (string Variant, Action<int, long> Body)[]
        {
            (New, (t, n) =>
            {
                long sum = 0;
                for (long i = 0; i < n; i++) { var o = new Payload(); o.Touch(i); sum += o.A; }
                sinks[t].Value += sum;
            }),
            (Locked, (t, n) => sinks[t].Value += SameThread(new LockedRenter(locked), n)),
            (SemiLocal, (t, n) => sinks[t].Value += SameThread(new SemiLocalRenter(semi), n)),
            (Locked + UncheckedSuffix, (t, n) => sinks[t].Value += SameThread(new LockedRenter(lockedUnchecked), n)),
            (SemiLocal + UncheckedSuffix, (t, n) => sinks[t].Value += SameThread(new SemiLocalRenter(semiUnchecked), n)),
            (Categorized, (t, n) =>
            {
                string section = (t & 1) == 0 ? "network" : "algorithm"; // the article's code sections
                long sum = 0;
                var pool = categorized;
                for (long i = 0; i < n; i++) { var o = pool.Rent(section); o.Touch(i); sum += o.A; pool.Return(section, o); }
                sinks[t].Value += sum;
            }),
            (Default, (t, n) => sinks[t].Value += SameThread(new DefaultRenter(defaultPool), n)),
            (Bag, (t, n) =>
            {
                long sum = 0;
                var pool = bag;
                for (long i = 0; i < n; i++)
                {
                    if (!pool.TryTake(out var o)) o = new Payload();
                    o.Touch(i);
                    sum += o.A;
                    pool.Add(o);
                }
                sinks[t].Value += sum;
            }),
        };
        var crossBoxes = new Payload?[3][];
        for (int i = 0; i < crossBoxes.Length; i++) crossBoxes[i] = new Payload?[64 * 8];
        var crossBodies = new (string Variant, Action<int, long> Body)[]
        {
            (Locked + CrossSuffix, (t, n) => sinks[t].Value += CrossLoop(locked.Rent, locked.Return, crossBoxes[0], t, n)),
            (SemiLocal + CrossSuffix, (t, n) => sinks[t].Value += CrossLoop(semi.Rent, semi.Return, crossBoxes[1], t, n)),
            (Default + CrossSuffix, (t, n) => sinks[t].Value += CrossLoop(defaultPool.Get, defaultPool.Return, crossBoxes[2], t, n)),
        };

        // Tiered JIT: let every body reach optimised code before the first (1-thread) measurement, or
        // the first thread count would be measured on unoptimised code and flatter the scaling ratios.
        TierUp.Run(context, [.. bodies.Concat(crossBodies).Select(b => (Action)(() => b.Body(0, context.IsSmoke ? 10 : 500)))]);

        // The bodies run tier-1 code from here on, so in quick mode a measurement's own warm-up only has to bring its fresh
        // pool to its steady population and its threads onto the cores: a few passes of the fixed count in 10 ms, not the
        // quick mode's 50 ms, which re-warmed code that TierUp had already brought to tier 1 for each of the 30 cells.
        var settings = context.Settings.Pick(smoke: context.Settings, quick: context.Settings with { WarmUp = TimeSpan.FromMilliseconds(10) }, full: context.Settings);
        void MeasureFresh(string variant, int threads, Action<int, long> body)
        {
            context.Status($"{variant} threads={threads}");
            context.Cancellation.ThrowIfCancellationRequested();
            context.Record(ThreadSweep.Measure(variant, threads, body, settings, p, total));
        }
        foreach (int threads in threadCounts)
        {
            foreach (var (variant, body) in bodies)
            {
                Fresh();
                MeasureFresh(variant, threads, body);
            }
            if (threads < 2) continue;
            foreach (var (variant, body) in crossBodies)
            {
                Fresh();
                Array.ForEach(crossBoxes, boxes => Array.Clear(boxes));
                MeasureFresh(variant, threads, body);
            }
        }
        locked.Dispose();
        semi.Dispose();
        categorized.Dispose();
        lockedUnchecked.Dispose();
        semiUnchecked.Dispose();
        GC.KeepAlive(sinks);
        AddCrossThreadTable(context);
        AddDoubleReturnCheckTable(context);
    }

    /// <summary>
    /// The same-thread loop every pool with a plain Rent/Return runs: rent, touch, return. The pool comes in a struct
    /// adapter, so the JIT compiles the loop once per pool type with direct calls, as a loop written out per pool would be.
    /// </summary>
    private static long SameThread<TRenter>(TRenter pool, long n)
        where TRenter : struct, IRenter
    {
        long sum = 0;
        for (long i = 0; i < n; i++) { var o = pool.Rent(); o.Touch(i); sum += o.A; pool.Return(o); }
        return sum;
    }

    private interface IRenter
    {
        Payload Rent();
        void Return(Payload item);
    }

    private readonly struct LockedRenter(LockedPool<Payload> pool) : IRenter
    {
        public Payload Rent() => pool.Rent();
        public void Return(Payload item) => pool.Return(item);
    }

    private readonly struct SemiLocalRenter(SemiLocalPool<Payload> pool) : IRenter
    {
        public Payload Rent() => pool.Rent();
        public void Return(Payload item) => pool.Return(item);
    }

    private readonly struct DefaultRenter(DefaultObjectPool<Payload> pool) : IRenter
    {
        public Payload Rent() => pool.Get();
        public void Return(Payload item) => pool.Return(item);
    }

    // The cross-thread loop, its table and the pooled object.
    /// <summary>
    /// Each operation rents, swaps the object into one of 64 shared mailboxes, and returns what it got
    /// out: an object some thread put there, most often another one. The swap costs the same for every
    /// variant, so the differences are the pools' cross-thread costs.
    /// </summary>
    private static long CrossLoop(Func<Payload> rent, Action<Payload> giveBack, Payload?[] mailboxes, int thread, long n)
    {
        long sum = 0;
        int box = thread * 8;
        for (long i = 0; i < n; i++)
        {
            var o = rent();
            o.Touch(i);
            sum += o.A;
            box = (box + 8) & (mailboxes.Length - 1); // every 8th slot: one mailbox per cache line
            var other = Interlocked.Exchange(ref mailboxes[box], o); // hands o to whichever thread visits the box next
            if (other is not null) giveBack(other);
        }
        return sum;
    }

    private static void AddCrossThreadTable(ExperimentContext context)
    {
        var ms = context.Measurements;
        double? Ops(string variant, int threads) => ms.FirstOrDefault(m => m.Variant == variant && m.Threads == threads)?.OpsPerSecond;
        int two = ms.Any(m => m.Threads == 2) ? 2 : ms.Max(m => m.Threads);
        string Show(double? ratio) => ratio is { } r ? Format.Ratio(r) : "n/a";
        context.AddTable(new ResultTable("Cross-thread handoff (no goal; ratios from this run)", ["comparison", "today (medians)"],
        [
            [$"SemiLocalPool same-thread / cross-thread throughput, {two} threads", Show(Ops(SemiLocal, two) / Ops(SemiLocal + CrossSuffix, two))],
            [$"SemiLocalPool / LockedPool cross-thread throughput, {two} threads", Show(Ops(SemiLocal + CrossSuffix, two) / Ops(Locked + CrossSuffix, two))],
            [$"SemiLocalPool / DefaultObjectPool cross-thread throughput, {two} threads", Show(Ops(SemiLocal + CrossSuffix, two) / Ops(Default + CrossSuffix, two))],
        ]));
        context.Note("CategorizedPool looks its category up by name on every operation (the article's Allocate(category, type)); code that holds Category(name) pays what SemiLocalPool pays.");
        context.Note($"Machine: {Environment.ProcessorCount} logical processors; thread counts above that oversubscribe. The cross-thread variants add one Interlocked.Exchange per operation (the mailbox), the same for each pool.");
    }

    /// <summary>
    /// What the double-return scan costs: each pool's throughput with the scan over the same pool built
    /// without it, measured in this run one after the other at every thread count.
    /// </summary>
    private static void AddDoubleReturnCheckTable(ExperimentContext context)
    {
        var ms = context.Measurements;
        double? Ops(string variant, int threads) => ms.FirstOrDefault(m => m.Variant == variant && m.Threads == threads)?.OpsPerSecond;
        string Show(double? ratio) => ratio is { } r ? Format.Ratio(r) : "n/a";
        var rows = ms.Select(m => m.Threads).Distinct().Order()
            .Select(threads => (string[])[
                Format.Count(threads, "thread"),
                Show(Ops(SemiLocal, threads) / Ops(SemiLocal + UncheckedSuffix, threads)),
                Show(Ops(Locked, threads) / Ops(Locked + UncheckedSuffix, threads)),
            ])
            .ToArray();
        context.AddTable(new ResultTable("Double-return check: throughput with the check / without (judged at 1 thread: ≥ 0.95; medians of this run)",
            ["threads", "SemiLocalPool", "LockedPool"], rows));
        context.Note("The check: a return compares the object with the top of the returning thread's stack (SemiLocalPool: up to its 8 newest objects, inline) or the object stored last (LockedPool: one compare, under its lock).");
    }

    /// <summary>The pooled object: a few fields, touched each use.</summary>
    private sealed class Payload
    {
        public long A;
        public long B;
        public long C;
        public long D;

        public void Touch(long i)
        {
            A = i;
            B ^= i;
            C += 1;
            D = A + C;
        }
    }
}
