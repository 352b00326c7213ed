using Manaloc.Collections;
using Manaloc.Tests.Memory;
using Manaloc.Tests.Platform;

namespace Manaloc.Tests.Collections;

/// <summary>The growth thread runs every request, whether it was awake or asleep when it came. With the huge-page tests:
/// their hooks hold the growth thread, which would only delay these.</summary>
[Collection(nameof(ProcessMemoryCollection))]
public sealed class GrowthPreparerTests
{
    [Fact]
    public void Every_request_runs_whether_the_thread_was_asleep_or_awake()
    {
        // Two threads request in bursts, with pauses that let the growth thread go to sleep between them: a wake-up lost
        // between its last look at the requests and its wait would leave a request unrun, and the count short.
        const int Rounds = 200;
        var counter = new CountingWork();
        int refused = 0;
        var requesters = Enumerable.Range(0, 2).Select(t => new Thread(() =>
        {
            for (int round = 0; round < Rounds; round++)
            {
                if (!GrowthPreparer.Request(counter)) Interlocked.Increment(ref refused);
                if (round % 8 == t) Thread.Sleep(2);
            }
        })).ToArray();
        foreach (var thread in requesters) thread.Start();
        foreach (var thread in requesters) thread.Join();
        Assert.Equal(0, refused);
        Assert.True(SpinWait.SpinUntil(() => counter.Runs == 2 * Rounds, TimeSpan.FromSeconds(10)), $"{counter.Runs} of {2 * Rounds} requests ran");
    }

    [Fact]
    public void A_request_after_a_long_sleep_runs()
    {
        var counter = new CountingWork();
        Assert.True(GrowthPreparer.Request(counter));
        Assert.True(SpinWait.SpinUntil(() => counter.Runs == 1, TimeSpan.FromSeconds(10)), "the first request never ran");
        Thread.Sleep(200); // the growth thread is waiting on its semaphore by now
        Assert.True(GrowthPreparer.Request(counter));
        Assert.True(SpinWait.SpinUntil(() => counter.Runs == 2, TimeSpan.FromSeconds(10)), "the request after the sleep never ran");
    }

    [LinuxFact]
    public void The_growth_thread_runs_in_the_batch_scheduling_class()
    {
        // SCHED_BATCH (3): its wake-up must not preempt the inserting thread that woke it.
        var policy = new PolicyWork();
        Assert.True(GrowthPreparer.Request(policy));
        Assert.True(policy.Done.Wait(TimeSpan.FromSeconds(10)), "the request never ran");
        Assert.Equal("3", policy.Policy);
    }

    [Fact]
    public void A_request_that_throws_does_not_stop_the_thread()
    {
        var counter = new CountingWork();
        Assert.True(GrowthPreparer.Request(new ThrowingWork()));
        Assert.True(GrowthPreparer.Request(counter));
        Assert.True(SpinWait.SpinUntil(() => counter.Runs == 1, TimeSpan.FromSeconds(10)), "the request after a throwing one never ran");
    }

    private sealed class CountingWork : IThreadPoolWorkItem
    {
        private int _runs;
        public int Runs => Volatile.Read(ref _runs);
        public void Execute() => Interlocked.Increment(ref _runs);
    }

    private sealed class ThrowingWork : IThreadPoolWorkItem
    {
        public void Execute() => throw new InvalidOperationException("a failing request");
    }

    private sealed class PolicyWork : IThreadPoolWorkItem
    {
        public ManualResetEventSlim Done { get; } = new();
        public string? Policy { get; private set; }

        public void Execute()
        {
            string? line = File.ReadLines("/proc/thread-self/sched").FirstOrDefault(l => l.StartsWith("policy", StringComparison.Ordinal));
            Policy = line?.Split(':')[1].Trim();
            Done.Set();
        }
    }
}
