using Manaloc.Threading;
using static Manaloc.Tests.Threading.DispatcherTestKit;

namespace Manaloc.Tests.Threading;

/// <summary>
/// Stress tests bounded by counts, with progress watchdogs (never timing assertions): no lost
/// wake-up in the sleep/wake handshakes, and no item lost or duplicated by a shutdown at a random moment.
/// </summary>
public sealed class DedicatedThreadDispatcherStressTests
{
    [Fact]
    public void Tiny_queue_handoffs_never_stall()
    {
        // Capacity 2 with two producers and two workers: both sides sleep and wake constantly, so a
        // lost wake-up on either side would stall the run and trip the progress watchdog.
        const int PerProducer = 150_000;
        long executed = 0;
        var d = new DedicatedThreadDispatcher(new DispatcherOptions { ThreadCount = 2, Capacity = 2 });
        var producers = Enumerable.Range(0, 2).Select(p => new Thread(() =>
        {
            var random = new Random(p);
            for (int i = 0; i < PerProducer; i++)
            {
                if (random.Next(64) == 0) Thread.Yield();
                if ((i & 1) == 0) d.Post(() => Interlocked.Increment(ref executed));
                else d.PostAsync(() => Interlocked.Increment(ref executed)).AsTask().Wait();
            }
        })).ToArray();
        foreach (var t in producers) t.Start();

        long last = -1;
        var lastProgress = DateTime.UtcNow;
        while (Volatile.Read(ref executed) < 2 * PerProducer)
        {
            long now = Volatile.Read(ref executed);
            if (now != last)
            {
                last = now;
                lastProgress = DateTime.UtcNow;
            }
            Assert.True(DateTime.UtcNow - lastProgress < TimeSpan.FromSeconds(10), $"stalled at {now} of {2 * PerProducer} items: a lost wake-up");
            Thread.Sleep(5);
        }
        foreach (var t in producers) Assert.True(t.Join(Watchdog));
        Assert.Empty(d.Shutdown(Timeout.InfiniteTimeSpan));
        Assert.Equal(2 * PerProducer, d.GetStatistics().Executed);
    }

    [Theory]
    [InlineData(FullQueueMode.Block)]
    [InlineData(FullQueueMode.FailFast)]
    [InlineData(FullQueueMode.DropOldest)]
    public void Shutdown_at_a_random_moment_loses_nothing(FullQueueMode mode)
    {
        var random = new Random(1234 + (int)mode);
        for (int round = 0; round < 25; round++)
        {
            RunRound(mode, random.Next(), round);
        }
    }

    private static void RunRound(FullQueueMode mode, int seed, int round)
    {
        var random = new Random(seed);
        const int Producers = 3, PerProducer = 4000;
        int total = Producers * PerProducer;
        var executed = new int[total];
        var dropped = new int[total];
        var accepted = new int[total];
        var items = new Action[total];
        var ids = new Dictionary<Action, int>(ReferenceEqualityComparer.Instance);
        for (int i = 0; i < total; i++)
        {
            int id = i;
            items[i] = () =>
            {
                Interlocked.Increment(ref executed[id]);
                if (id % 97 == 0) throw new InvalidOperationException("a failing item");
                if (id % 13 == 0) Thread.SpinWait(200);
            };
            ids[items[i]] = i;
        }
        var d = new DedicatedThreadDispatcher(new DispatcherOptions
        {
            Name = $"shutdown-stress-{mode}-{round}",
            ThreadCount = random.Next(1, 4),
            Capacity = random.Next(1, 65),
            FullMode = mode,
            OnItemDropped = item => Interlocked.Increment(ref dropped[ids[item]]),
        });
        using var start = new Barrier(Producers + 1);
        var producers = Enumerable.Range(0, Producers).Select(p => new Thread(() =>
        {
            var r = new Random(seed + p + 1);
            start.SignalAndWait();
            for (int i = p * PerProducer; i < (p + 1) * PerProducer; i++)
            {
                bool ok;
                try
                {
                    switch (r.Next(3))
                    {
                        case 0: d.Post(items[i]); ok = true; break;
                        case 1: ok = d.TryPost(items[i]); break;
                        default: d.PostAsync(items[i]).AsTask().GetAwaiter().GetResult(); ok = true; break;
                    }
                }
                catch (InvalidOperationException)
                {
                    ok = false;
                }
                if (ok) accepted[i] = 1;
            }
        })).ToArray();
        foreach (var t in producers) t.Start();
        start.SignalAndWait();
        Thread.SpinWait(random.Next(0, 200_000));
        var timeout = random.Next(4) switch
        {
            0 => TimeSpan.Zero,
            1 => TimeSpan.FromMilliseconds(random.Next(1, 5)),
            2 => TimeSpan.FromTicks(random.Next(1, 5000)),
            _ => Timeout.InfiniteTimeSpan,
        };
        var notRun = Await(d.ShutdownAsync(timeout), "the shutdown");
        foreach (var t in producers) Assert.True(t.Join(Watchdog), "a producer hung after the shutdown");
        Await(d.Completion, "the workers' exit");

        var returned = new int[total];
        foreach (var item in notRun) returned[ids[item]]++;
        for (int i = 0; i < total; i++)
        {
            int outcomes = executed[i] + dropped[i] + returned[i];
            Assert.True(outcomes == accepted[i],
                $"{mode}, round {round}, item {i}: accepted={accepted[i]} but executed={executed[i]}, dropped={dropped[i]}, returned={returned[i]} (timeout {timeout})");
        }
        if (timeout == Timeout.InfiniteTimeSpan) Assert.Empty(notRun);
        Assert.Equal(accepted.Sum(), d.GetStatistics().Posted);
        Assert.Equal(executed.Sum(), d.GetStatistics().Executed);
        Assert.Equal(dropped.Sum(), d.GetStatistics().Dropped);
        Assert.Equal(total - accepted.Sum(), d.GetStatistics().Rejected);
    }
}
