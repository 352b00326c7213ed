using System.Collections.Concurrent;
using Manaloc.Threading;
using Xunit.Abstractions;

namespace Manaloc.Tests.Threading;

/// <summary>
/// Lost-wakeup stress: hand-offs through a bounded ring with random spins and yields on both
/// sides, so every interleaving of Set against Wait's spin, claim, block and wake comes up. A lost
/// wakeup shows as a stall (the watchdog fails the test), a reordered Set as a wrong item.
/// </summary>
public sealed class EconomicResetEventStressTests(ITestOutputHelper output)
{
    [Fact]
    public void Ten_million_handoffs_with_random_pauses_lose_no_wakeup()
        => RunRing(10_000_000, window: 16, consumerSpin: EconomicResetEvent.DefaultSpinCount, producerSpin: EconomicResetEvent.DefaultSpinCount);

    [Fact]
    public void Handoffs_that_always_block_lose_no_wakeup()
        => RunRing(500_000, window: 4, consumerSpin: 0, producerSpin: 0);

    [Fact]
    public void Many_producers_one_consumer_over_a_queue_lose_nothing()
    {
        const int Producers = 3;
        const int PerProducer = 200_000;
        using var ready = new EconomicResetEvent(spinCount: 4);
        var queue = new ConcurrentQueue<int>();
        long consumed = 0;
        long sum = 0;
        var errors = new List<Exception>();
        var threads = new List<Thread>();
        for (int p = 0; p < Producers; p++)
        {
            int seed = p + 1;
            threads.Add(EventTestSupport.Start(() =>
            {
                ulong rng = (ulong)seed * 0x9E3779B97F4A7C15UL;
                for (int i = 1; i <= PerProducer; i++)
                {
                    queue.Enqueue(i);
                    ready.Set();
                    RandomPause(ref rng);
                }
            }, errors, $"producer {p}"));
        }
        threads.Add(EventTestSupport.Start(() =>
        {
            ulong rng = 77;
            long n = 0;
            while (n < (long)Producers * PerProducer)
            {
                if (queue.TryDequeue(out int item))
                {
                    sum += item;
                    n++;
                    Volatile.Write(ref consumed, n);
                    RandomPause(ref rng);
                }
                else
                {
                    ready.Wait();
                }
            }
        }, errors, "consumer"));

        EventTestSupport.JoinWithWatchdog(threads, () => Volatile.Read(ref consumed), () => $"consumed {Volatile.Read(ref consumed)}, queued {queue.Count}");

        Assert.Empty(errors);
        Assert.Equal((long)Producers * PerProducer, consumed);
        Assert.Equal(Producers * ((long)PerProducer * (PerProducer + 1) / 2), sum);
        Assert.True(queue.IsEmpty);
    }

    private void RunRing(long count, int window, int consumerSpin, int producerSpin)
    {
        using var itemReady = new EconomicResetEvent(spinCount: consumerSpin);
        using var spaceFree = new EconomicResetEvent(spinCount: producerSpin);
        var ring = new long[window];
        long produced = 0;
        long consumed = 0;
        long mismatches = 0;
        long blockedBefore = EconomicResetEvent.BlockedWaits;
        var errors = new List<Exception>();
        var started = System.Diagnostics.Stopwatch.StartNew();

        var producer = EventTestSupport.Start(() =>
        {
            ulong rng = 12345;
            for (long i = 0; i < count; i++)
            {
                while (i - Volatile.Read(ref consumed) >= window) spaceFree.Wait(); // acquire: the slot was read
                ring[i % window] = i * 7 + 1; // plain store: published by the release below and Set's fence
                Volatile.Write(ref produced, i + 1);
                itemReady.Set();
                RandomPause(ref rng, sleeps: true);
            }
        }, errors, "producer");
        var consumer = EventTestSupport.Start(() =>
        {
            ulong rng = 67890;
            for (long i = 0; i < count; i++)
            {
                while (Volatile.Read(ref produced) <= i) itemReady.Wait(); // acquire: the item is visible
                if (ring[i % window] != i * 7 + 1) mismatches++;
                Volatile.Write(ref consumed, i + 1);
                spaceFree.Set();
                RandomPause(ref rng, sleeps: true);
            }
        }, errors, "consumer");

        EventTestSupport.JoinWithWatchdog(
            [producer, consumer],
            () => Volatile.Read(ref consumed) + Volatile.Read(ref produced),
            () => $"produced {Volatile.Read(ref produced)}, consumed {Volatile.Read(ref consumed)}, itemReady set {itemReady.IsSet} blocked {itemReady.HasBlockedWaiter}, spaceFree set {spaceFree.IsSet} blocked {spaceFree.HasBlockedWaiter}");

        output.WriteLine($"{count:N0} hand-offs in {started.Elapsed.TotalSeconds:F1} s; {EconomicResetEvent.BlockedWaits - blockedBefore:N0} waits blocked (all tests in the process).");
        Assert.Empty(errors);
        Assert.Equal(count, produced);
        Assert.Equal(count, consumed);
        Assert.Equal(0, mismatches);
    }

    /// <summary>
    /// Mostly nothing; sometimes a short busy spin; now and then a yield of the time slice; with
    /// <paramref name="sleeps"/>, rarely a 1 ms sleep, long enough for the other side to stop
    /// spinning and block (so the wake path is exercised too).
    /// </summary>
    private static void RandomPause(ref ulong rng, bool sleeps = false)
    {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        if (sleeps && (rng & 8191) == 1) Thread.Sleep(1);
        else if ((rng & 63) == 0) Thread.Yield();
        else if ((rng & 7) == 0) Thread.SpinWait((int)((rng >> 8) & 31));
    }
}
