using System.Collections.Concurrent;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Harness;

[Collection(ProcessWideCollection.Name)]
public sealed class ThreadSweepTests
{
    private static readonly RunSettings Tiny = RunSettings.Smoke() with { Samples = 3 };

    [Theory]
    [InlineData(1)]
    [InlineData(3)]
    public void Every_thread_runs_its_share_of_a_fixed_total(int threads)
    {
        var calls = new ConcurrentBag<(int Index, long Ops, int ManagedId)>();
        var m = ThreadSweep.Measure("share", threads, (i, n) => calls.Add((i, n, Environment.CurrentManagedThreadId)), Tiny, Parameters.Of(("size", 8)), totalOperations: 600);

        Assert.Equal(threads, m.Threads);
        Assert.Equal(threads, m.Parameters.Int("threads"));
        Assert.Equal(8, m.Parameters.Int("size"));
        Assert.Equal(600 / threads * threads, m.OperationsPerSample);
        Assert.All(calls, c => Assert.Equal(600 / threads, c.Ops));
        Assert.Equal(Enumerable.Range(0, threads), calls.Select(c => c.Index).Distinct().Order());
        // Index 0 on the caller (so the threads released are as many as the shares, none left waiting for a CPU behind
        // another), every other index on one persistent helper of its own.
        Assert.All(calls.Where(c => c.Index == 0), c => Assert.Equal(Environment.CurrentManagedThreadId, c.ManagedId));
        var helpers = calls.Where(c => c.Index != 0).GroupBy(c => c.Index).Select(g => g.Select(c => c.ManagedId).Distinct().Single()).ToArray();
        Assert.Equal(threads - 1, helpers.Distinct().Count());
        Assert.DoesNotContain(Environment.CurrentManagedThreadId, helpers);
        Assert.Equal(3, m.Statistics.Count);
        Assert.Equal(0, calls.Count % threads);
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    public void A_fixed_warm_up_is_one_untimed_pass_of_its_count_before_the_samples(int threads)
    {
        // A warm-up time far longer than the samples: the fixed pass replaces it, so the body sees one short pass, then the samples.
        var settings = Tiny with { WarmUp = TimeSpan.FromSeconds(30) };
        var calls = new ConcurrentQueue<long>();
        var m = ThreadSweep.Measure("fixed warm-up", threads, (_, n) => calls.Enqueue(n), settings, totalOperations: 800, warmUpOperations: 200);

        var ops = calls.ToArray();
        Assert.Equal((1 + 3) * threads, ops.Length);
        Assert.Equal(threads, ops.Count(n => n == 200 / threads));
        Assert.Equal(3 * threads, ops.Count(n => n == 800 / threads));
        Assert.Equal(3, m.Statistics.Count);
        Assert.Equal(800 / threads * threads, m.OperationsPerSample);
    }

    [Fact]
    public void Threads_are_released_together()
    {
        // Each round, every thread waits (bounded) until all have entered: if the harness started
        // them one after another and waited for each, the count would never reach N within a round.
        const int threads = 3;
        int inside = 0;
        int missed = 0;
        ThreadSweep.Measure("together", threads, (i, n) =>
        {
            int arrived = Interlocked.Increment(ref inside);
            var spin = new SpinWait();
            var deadline = Environment.TickCount64 + 5_000;
            while (Volatile.Read(ref inside) % threads != 0 && Environment.TickCount64 < deadline) spin.SpinOnce();
            if (Volatile.Read(ref inside) % threads != 0) Interlocked.Increment(ref missed);
        }, Tiny, totalOperations: threads);
        Assert.Equal(0, missed);
    }

    [Fact]
    public void Allocation_on_worker_threads_is_counted()
    {
        object? keep = null;
        // new object() is 24 bytes; the barrier itself allocates nothing per round. The count is process-wide, so the test
        // runner's own threads (its result messages) can add to it, never take away: the least of three measurements.
        double least = Enumerable.Range(0, 3)
            .Select(_ => ThreadSweep.Measure("alloc", 2, (i, n) => { for (long k = 0; k < n; k++) Volatile.Write(ref keep, new object()); }, Tiny, totalOperations: 200_000).AllocatedBytesPerOp!.Value)
            .Min();
        Assert.InRange(least, 23.9, 24.5);
    }

    [Theory]
    [InlineData(0)] // the caller's share: it must still reach the closing barrier, or the helpers wait for ever
    [InlineData(1)]
    public void A_failing_body_fails_the_measurement(int failing)
    {
        var e = Assert.Throws<InvalidOperationException>(() =>
            ThreadSweep.Measure("boom", 2, (i, n) => { if (i == failing) throw new FormatException("bad"); }, Tiny, totalOperations: 2));
        Assert.IsType<FormatException>(e.InnerException);
    }
}
