using System.Collections.Concurrent;
using Manaloc.Lab.Harness;
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
public sealed class PoolScaling : Experiment
{
    private const string New = "new";
    private const string Locked = "LockedPool";
    private const string SemiLocal = "SemiLocalPool";
    private const string Categorized = "CategorizedPool";
    private const string Default = "DefaultObjectPool";
    private const string Bag = "ConcurrentBag";
    private const string CrossSuffix = " (cross-thread)";

    /// <inheritdoc/>
    public override string Name => "pool-scaling";
    /// <inheritdoc/>
    public override string Article => "Writing a Semi-Local Object Pool (seed 000)";
    /// <inheritdoc/>
    public override string Description => "A fixed total of rent/return pairs over 1..2N threads: locked vs semi-local vs categorized pools, new, DefaultObjectPool, ConcurrentBag; plus cross-thread returns.";
    /// <inheritdoc/>
    public override ArticleFigure Figure => new("Chart only: the single-lock pool slows down as processors are added; the semi-local pool keeps scaling (no number published)");
    /// <inheritdoc/>
    public override IReadOnlyList<string> Variants { get; } =
    [
        New, Locked, SemiLocal, Categorized, Default, Bag,
        Locked + CrossSuffix, SemiLocal + CrossSuffix, Default + CrossSuffix,
    ];
    /// <inheritdoc/>
    public override string Baseline => Locked;
    /// <inheritdoc/>
    public override string? SweepParameter => "threads";

    /// <inheritdoc/>
    public override IReadOnlyList<ParameterSpec> DescribeParameters(RunSettings settings) =>
    [
        new("threads", "threads sharing the fixed total of rent/return pairs", settings.ThreadCounts.Select(t => t.ToString(System.Globalization.CultureInfo.InvariantCulture)).ToArray()),
        new("pairs", "rent/return pairs per sample, split evenly over the threads", [TotalPairs(settings).ToString(System.Globalization.CultureInfo.InvariantCulture)]),
    ];

    private static long TotalPairs(RunSettings settings) => settings.IsSmoke ? 4_000 : settings.IsQuick ? 400_000 : 4_000_000;

    /// <inheritdoc/>
    public override void Run(ExperimentContext context)
    {
        long total = TotalPairs(context.Settings);
        var threadCounts = context.ThreadCounts;
        int maxThreads = threadCounts.Max();
        var sinks = new Padded<long>[maxThreads + 1]; // one padded slot per thread keeps results observable
        var p = Parameters.Of(("pairs", total));
        var options = new PoolOptions { Name = "lab.pool-scaling", BatchSize = 16, LocalCapacity = 64 };
        LockedPool<Payload> locked = null!;
        SemiLocalPool<Payload> semi = null!;
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
            locked = new LockedPool<Payload>(PoolPolicies.New<Payload>(), options);
            semi = new SemiLocalPool<Payload>(PoolPolicies.New<Payload>(), options);
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
            (Locked, (t, n) =>
            {
                long sum = 0;
                var pool = locked;
                for (long i = 0; i < n; i++) { var o = pool.Rent(); o.Touch(i); sum += o.A; pool.Return(o); }
                sinks[t].Value += sum;
            }),
            (SemiLocal, (t, n) =>
            {
                long sum = 0;
                var pool = semi;
                for (long i = 0; i < n; i++) { var o = pool.Rent(); o.Touch(i); sum += o.A; pool.Return(o); }
                sinks[t].Value += sum;
            }),
            (Categorized, (t, n) =>
            {
                string section = (t & 1) == 0 ? "network" : "algorithm"; // the article's code sections
                long sum = 0;
                var pool = categorized;
                for (long i = 0; i < n; i++) { var o = pool.Rent(section); o.Touch(i); sum += o.A; pool.Return(section, o); }
                sinks[t].Value += sum;
            }),
            (Default, (t, n) =>
            {
                long sum = 0;
                var pool = defaultPool;
                for (long i = 0; i < n; i++) { var o = pool.Get(); o.Touch(i); sum += o.A; pool.Return(o); }
                sinks[t].Value += sum;
            }),
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
        context.Status("warming up the JIT");
        for (int round = 0; round < 2; round++)
        {
            foreach (var (_, body) in bodies.Concat(crossBodies))
            {
                for (int call = 0; call < 40; call++) body(0, context.IsSmoke ? 10 : 500);
            }
            if (!context.IsSmoke) Thread.Sleep(150); // the runtime promotes hot methods after ~100 ms without new tier-0 code
        }

        foreach (int threads in threadCounts)
        {
            foreach (var (variant, body) in bodies)
            {
                Fresh();
                context.MeasureThreads(variant, threads, body, p, total);
            }
            if (threads < 2) continue;
            foreach (var (variant, body) in crossBodies)
            {
                Fresh();
                Array.ForEach(crossBoxes, boxes => Array.Clear(boxes));
                context.MeasureThreads(variant, threads, body, p, total);
            }
        }
        locked.Dispose();
        semi.Dispose();
        categorized.Dispose();
        GC.KeepAlive(sinks);
        AddCrossThreadTable(context);
    }

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

    /// <summary>The targets, judged on the medians (the fastest samples beside them).</summary>
    private static TargetResult[] Targets(IReadOnlyList<Measurement> ms)
    {
        double? Ops(string variant, int threads) => ms.FirstOrDefault(m => m.Variant == variant && m.Threads == threads)?.OpsPerSecond;
        double? Best(string variant, int threads) => ms.FirstOrDefault(m => m.Variant == variant && m.Threads == threads) is { } m ? 1e9 / m.Statistics.Min : null;
        double? Bytes(string variant) => ms.Where(m => m.Variant == variant).Max(m => m.AllocatedBytesPerOp);
        if (ms.Count == 0) return [];
        int two = ms.Any(m => m.Threads == 2) ? 2 : ms.Max(m => m.Threads);
        return
        [
            TargetResult.AtLeast($"SemiLocalPool / LockedPool throughput, {two} threads", Ops(SemiLocal, two) / Ops(Locked, two), 3) with { Best = Best(SemiLocal, two) / Best(Locked, two) },
            TargetResult.AtLeast($"SemiLocalPool / DefaultObjectPool throughput, {two} threads", Ops(SemiLocal, two) / Ops(Default, two), 1.5) with { Best = Best(SemiLocal, two) / Best(Default, two) },
            TargetResult.AtLeast($"SemiLocalPool {two} threads / 1 thread throughput", Ops(SemiLocal, two) / Ops(SemiLocal, 1), 1.7) with { Best = Best(SemiLocal, two) / Best(SemiLocal, 1) },
            TargetResult.AtMost("SemiLocalPool bytes per rent/return (worst thread count)", Bytes(SemiLocal), 0.01, "B"),
        ];
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

    /// <inheritdoc/>
    public override VerdictResult Judge(IReadOnlyList<Measurement> measurements)
    {
        double? Ops(string variant, int threads) => measurements.FirstOrDefault(m => m.Variant == variant && m.Threads == threads)?.OpsPerSecond;
        int max = measurements.Where(m => m.Variant == SemiLocal).Select(m => m.Threads).DefaultIfEmpty(0).Max();
        if (max < 2 || Ops(SemiLocal, max) is not double semiMax || Ops(Locked, max) is not double lockedMax
            || Ops(SemiLocal, 1) is not double semi1 || Ops(Locked, 1) is not double locked1)
        {
            return new(Verdict.NotComparable, "No multi-thread measurement of both pools.") { Targets = Targets(measurements) };
        }
        double ratio = semiMax / lockedMax;
        double lockedScaling = lockedMax / locked1, semiScaling = semiMax / semi1;
        var verdict = ratio < 0.9 ? Verdict.Reversed : ratio >= 1.1 && semiScaling > lockedScaling ? Verdict.Holds : Verdict.Shrinks;
        return new(verdict,
            $"At {max} threads the semi-local pool does {Format.Ratio(ratio)} the locked pool's rent/return pairs per second; from 1 to {max} threads the locked pool scales {Format.Ratio(lockedScaling)}, the semi-local {Format.Ratio(semiScaling)}.",
            ratio, "x") { Targets = Targets(measurements) };
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
