using System.Collections.Concurrent;
using Manaloc.Lab.Harness;
using Manaloc.Pooling;
using Microsoft.Extensions.ObjectPool;

namespace Manaloc.Lab.Experiments;

/// <summary>The cross-thread loop, its table and the pooled object.</summary>
public sealed partial class PoolScaling
{
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
        context.AddTable(new ResultTable("Double-return check: throughput with the check / without (goal ≥ 0.95; ratios from this run)",
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
