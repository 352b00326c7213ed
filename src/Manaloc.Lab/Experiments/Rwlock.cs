using System.Runtime.CompilerServices;
using Manaloc.Threading;

namespace Manaloc.Lab.Experiments;

/// <summary>
/// Seed 004, "Performance Comparison on Reader-Writer Locks": threads repeatedly enter a critical
/// region that approximates e, each time becoming a writer with some probability; the region's
/// hold time is E iterations. There, boost's shared_mutex lost to a plain mutex except at long
/// holds and almost no writers, and Windows' SRW lock beat both. Today: <c>lock</c>,
/// System.Threading.Lock, ReaderWriterLockSlim and SlimReaderWriterLock over writer percentage ×
/// hold time × threads.
/// </summary>
public sealed class Rwlock() : Experiment(
    "rwlock", "Performance Comparison on Reader-Writer Locks (seed 004)",
    "Writer % × hold time × threads: lock, System.Threading.Lock, ReaderWriterLockSlim, SlimReaderWriterLock.",
    AllVariants, Monitor, quickSeconds: 9.5, quickLaunches: 2, sweepParameter: "threads")
{
    private const string Monitor = "lock";
    private const string LockType = "System.Threading.Lock";
    private const string Rwls = "ReaderWriterLockSlim";
    private const string Slim = "SlimReaderWriterLock";
    private static double s_sink;

    /// <inheritdoc/>
    public override Claim Claim => new("SRW beat mutex and shared_mutex at every writer frequency; shared_mutex lost to a mutex except at long holds and ≤ 2% writers (charts only, no table)", null,
        new Metric("SlimReaderWriterLock vs ReaderWriterLockSlim over the whole grid (geometric mean)", Unit.Ratio, f => Versus(f, Rwls, _ => true)));
    /// <inheritdoc/>
    /// <remarks>
    /// Judged at hold 1, where the lock's own cost dominates the critical section; at hold 50 the
    /// region's arithmetic dwarfs any lock and every ratio tends to 1, so those cells are reported beside, not judged.
    /// </remarks>
    public override IReadOnlyList<Target> Targets =>
    [
        Target.AtLeast("SlimReaderWriterLock vs ReaderWriterLockSlim, 0–2% writers, hold 1 (geometric mean over thread counts)", Unit.Ratio,
            f => Versus(f, Rwls, m => Writers(m) <= 2 && Hold(m) == 1), 1.5),
        Target.AtLeast("SlimReaderWriterLock vs lock, 50% writers, hold 1 (geometric mean over thread counts; within 10%)", Unit.Ratio,
            f => Versus(f, Monitor, m => Writers(m) == 50 && Hold(m) == 1), 0.9),
    ];

    /// <summary>Geometric mean over the matching cells of how many times faster SlimReaderWriterLock is than <paramref name="other"/>.</summary>
    private static double? Versus(Figures f, string other, Func<Measurement, bool> where)
        => Figures.GeometricMean(f.All.Where(m => m.Variant == Slim && where(m))
            .Select(s => f.All.FirstOrDefault(m => m.Variant == other && m.ParameterKey == s.ParameterKey) is { } o ? f.TimesBetter(s, o) : null));
    /// <inheritdoc/>
    public override Headline Headline => new(
        new Metric("SlimReaderWriterLock vs ReaderWriterLockSlim, 0–2% writers, short holds (geometric mean over thread counts; times as fast)", Unit.Ratio,
            f => Versus(f, Rwls, m => Writers(m) <= 2 && Hold(m) == 1)),
        new Metric("vs lock, 50% writers (1x = as fast)", Unit.Ratio, f => Versus(f, Monitor, m => Writers(m) == 50 && Hold(m) == 1)),
        new Metric("vs ReaderWriterLockSlim over the whole grid", Unit.Ratio, f => Versus(f, Rwls, _ => true)));
    private static readonly string[] AllVariants = [Monitor, LockType, Rwls, Slim];

    /// <inheritdoc/>
    public override IReadOnlyList<ParameterSpec> DescribeParameters(RunSettings settings) =>
    [
        new("writers", "percentage of lock acquisitions that are writes", WriterPercents(settings).Select(Invariant).ToArray()),
        new("hold", "E: iterations of the e series computed inside the lock (hold time)", Holds(settings).Select(Invariant).ToArray()),
    ];

    private static int[] WriterPercents(RunSettings s) => s.IsSmoke ? [0, 50] : s.IsQuick ? [0, 2, 50] : [0, 1, 2, 5, 10, 25, 50];
    private static int[] Holds(RunSettings s) => s.IsSmoke ? [1] : [1, 50];
    private static string Invariant(int v) => v.ToString(System.Globalization.CultureInfo.InvariantCulture);

    /// <inheritdoc/>
    public override void Run(ExperimentContext context)
    {
        // The grid has 4 variants × writers × holds × threads cells (72 in quick mode, 168 in full
        // mode on 2 cores), so each cell gets a short warm-up and few samples: about 4 s a launch in quick
        // mode and about 2 minutes in full mode on 2 cores. Each round also starts its threads and runs one
        // untimed pass: in quick mode a quarter of a sample (the code is tiered up before the first cell, so
        // the pass only has to start the threads and bring the fresh lock into their caches; a full pass was
        // a third of the experiment's time), in full mode a whole one.
        // Fairness on a shared, noisy machine: a cell's samples are taken in rounds, one sample of
        // every variant per round (in a balanced Williams order), so a burst of outside load hits all four
        // variants alike instead of all the samples of one; every round uses fresh lock objects,
        // so no variant inherits state from another cell (an inflated monitor, spin statistics).
        var perRound = context.IsSmoke ? context.Settings with { Samples = 1 }
            : context.IsQuick ? context.Settings with { WarmUp = TimeSpan.Zero, SampleTarget = TimeSpan.FromMilliseconds(5), Samples = 1 }
            : context.Settings with { WarmUp = TimeSpan.FromMilliseconds(20), SampleTarget = TimeSpan.FromMilliseconds(50), Samples = 1 };
        int rounds = context.IsSmoke ? context.Settings.Samples : context.IsQuick ? 4 : 7;
        var region = new Region();
        bool quarterPass = context.Settings.Mode == RunMode.Quick;
        if (!context.IsSmoke) TierUpCells(context, perRound, region);
        foreach (int writers in WriterPercents(context.Settings))
        {
            foreach (int hold in Holds(context.Settings))
            {
                foreach (int threads in context.ThreadCounts)
                {
                    var p = Parameters.Of(("writers", writers), ("hold", hold));
                    context.Status($"threads={threads} {Measurement.FormatParameters(p)}");
                    var totals = new long[AllVariants.Length];
                    var merged = Rounds.Interleave(AllVariants.Length, rounds, context.Cancellation,
                        (v, _) => MeasureCell(AllVariants[v], perRound, threads, p, region, writers, hold, quarterPass, ref totals[v]));
                    foreach (var m in merged) context.Record(m);
                }
            }
        }
        context.Note($"ns per lock acquisition, all threads together (lower is better); ratios are to `lock` in the same cell. Each cell: {Format.Count(rounds, "round")} of one sample per variant in a balanced (Williams) order, fresh lock objects every round.");
    }

    /// <summary>
    /// Tiered JIT: the cells' loops and the locks' slow paths (reached only under contention) must
    /// run optimised code from the first cell on, or the first cells measure tier-0 code and flatter
    /// or punish whichever variant comes first. Short one- and two-thread runs of every variant at
    /// 0% and 50% writers, then a pause for the background tier-1 compiles.
    /// </summary>
    private static void TierUpCells(ExperimentContext context, RunSettings settings, Region region)
    {
        var brief = settings with { WarmUp = TimeSpan.FromMilliseconds(2), SampleTarget = TimeSpan.FromMilliseconds(2), Samples = 1 };
        var cells = new List<Action>();
        foreach (int writers in new[] { 0, 50 })
        {
            foreach (int threads in new[] { 1, 2 })
            {
                foreach (string variant in AllVariants)
                {
                    cells.Add(() =>
                    {
                        long total = 0;
                        _ = MeasureCell(variant, brief, threads, Parameters.Of(("writers", writers), ("hold", 1)), region, writers, 1, quarterPass: false, ref total);
                    });
                }
            }
        }
        TierUp.Run(context, cells, rounds: 2, calls: 1);
    }

    /// <summary>One round of one cell for one variant, on a lock object of its own.</summary>
    /// <param name="quarterPass">The round's untimed pass is a quarter of a sample rather than a whole one.</param>
    /// <param name="total">The operation count per sample; 0 on the first round, which sizes it from a pilot run.</param>
    private static Measurement MeasureCell(
        string variant, RunSettings settings, int threads, Parameters parameters, Region region, int writers, int hold, bool quarterPass, ref long total)
    {
        switch (variant)
        {
            case Monitor:
                return Measure(settings, variant, threads, parameters, new MonitorAdapter(new object()), region, writers, hold, quarterPass, ref total);
            case LockType:
                return Measure(settings, variant, threads, parameters, new LockAdapter(new Lock()), region, writers, hold, quarterPass, ref total);
            case Rwls:
                using (var rwls = new ReaderWriterLockSlim(LockRecursionPolicy.NoRecursion))
                {
                    return Measure(settings, variant, threads, parameters, new RwlsAdapter(rwls), region, writers, hold, quarterPass, ref total);
                }
            default:
                return Measure(settings, variant, threads, parameters, new SlimAdapter(new SlimReaderWriterLock()), region, writers, hold, quarterPass, ref total);
        }
    }

    private static Measurement Measure<TLock>(
        RunSettings settings, string variant, int threads, Parameters parameters,
        TLock gate, Region region, int writerPercent, int hold, bool quarterPass, ref long total)
        where TLock : struct, ILockAdapter
    {
        uint threshold = (uint)((ulong)writerPercent * uint.MaxValue / 100);
        var rngs = new Padded<ulong>[threads]; // one padded seed per thread: no false sharing between the threads' generators
        for (int t = 0; t < threads; t++) rngs[t].Value = (ulong)(t + 1) * 0x9E3779B97F4A7C15UL;
        // A fixed operation count from an uncontended pilot (best of three short runs) rather than the
        // harness's calibration: on a loaded machine one descheduled calibration round can shrink the
        // count to a few operations per sample, and the samples then time the start barrier, not the lock.
        if (total == 0) total = Math.Max(threads * 64L, (long)(settings.SampleTarget.TotalNanoseconds / PilotNsPerOp(gate, region, threshold, hold)));
        return ThreadSweep.Measure(variant, threads, (t, n) => Work(gate, region, ref rngs[t].Value, threshold, hold, n), settings, parameters, total,
            warmUpOperations: quarterPass ? total / 4 : null);
    }

    // The work loop inside and outside the lock, and one adapter per lock type.
    private static double PilotNsPerOp<TLock>(TLock gate, Region region, uint writeThreshold, int hold)
        where TLock : struct, ILockAdapter
    {
        ulong rng = 0x2545F4914F6CDD1DUL;
        double best = Pilot.NsPerOp(n => Work(gate, region, ref rng, writeThreshold, hold, n), startOperations: 256, minimum: TimeSpan.FromMilliseconds(0.5), runs: 3);
        return Math.Max(best, 0.5);
    }

    private static void Work<TLock>(TLock gate, Region region, ref ulong rng, uint writeThreshold, int hold, long operations)
        where TLock : struct, ILockAdapter
    {
        double sink = 0;
        ulong x = rng;
        for (long i = 0; i < operations; i++)
        {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            if ((uint)x < writeThreshold)
            {
                gate.EnterWrite();
                region.Write(hold);
                gate.ExitWrite();
            }
            else
            {
                gate.EnterRead();
                sink += region.Read(hold);
                gate.ExitRead();
            }
        }
        rng = x;
        s_sink = sink; // keeps the reads alive
    }

    private static int Hold(Measurement m)
        => m.Parameters.TryGetValue("hold", out var h) ? h.AsInt() : -1;

    private static int ThreadCount(Measurement m)
        => m.Parameters.TryGetValue("threads", out var t) ? t.AsInt() : m.Threads;

    private static int Writers(Measurement m)
        => m.Parameters.TryGetValue("writers", out var w) ? w.AsInt() : -1;

    /// <summary>The shared critical region: readers sum a series over shared terms; writers rewrite them.</summary>
    private sealed class Region
    {
        private readonly double[] _terms = Enumerable.Range(0, 64).Select(i => 1.0 / (i + 1)).ToArray();

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public double Read(int hold)
        {
            double sum = 1, term = 1;
            for (int k = 1; k <= hold; k++)
            {
                term /= k;
                sum += term * _terms[k & 63];
            }
            return sum;
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void Write(int hold)
        {
            double term = 1;
            for (int k = 1; k <= hold; k++)
            {
                term /= k;
                _terms[k & 63] = 1 + term;
            }
        }
    }

    private interface ILockAdapter
    {
        void EnterRead();
        void ExitRead();
        void EnterWrite();
        void ExitWrite();
    }

    private readonly struct MonitorAdapter(object gate) : ILockAdapter
    {
        public void EnterRead() => System.Threading.Monitor.Enter(gate);
        public void ExitRead() => System.Threading.Monitor.Exit(gate);
        public void EnterWrite() => System.Threading.Monitor.Enter(gate);
        public void ExitWrite() => System.Threading.Monitor.Exit(gate);
    }

    private readonly struct LockAdapter(Lock gate) : ILockAdapter
    {
        public void EnterRead() => gate.Enter();
        public void ExitRead() => gate.Exit();
        public void EnterWrite() => gate.Enter();
        public void ExitWrite() => gate.Exit();
    }

    private readonly struct RwlsAdapter(ReaderWriterLockSlim gate) : ILockAdapter
    {
        public void EnterRead() => gate.EnterReadLock();
        public void ExitRead() => gate.ExitReadLock();
        public void EnterWrite() => gate.EnterWriteLock();
        public void ExitWrite() => gate.ExitWriteLock();
    }

    private readonly struct SlimAdapter(SlimReaderWriterLock gate) : ILockAdapter
    {
        public void EnterRead() => gate.EnterReadLock();
        public void ExitRead() => gate.ExitReadLock();
        public void EnterWrite() => gate.EnterWriteLock();
        public void ExitWrite() => gate.ExitWriteLock();
    }
}
