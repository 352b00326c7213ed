using System.Buffers;
using Manaloc.Collections;

namespace Manaloc.Tests.Collections;

/// <summary>The cache's per-thread hit and miss tallies: exact sums, one tally per thread and cache, stripes dealt round-robin.</summary>
// In NativeCacheTests' collection: see there.
[Collection(nameof(NativeCacheTests))]
public sealed class ReadTalliesTests
{
    [Fact]
    public void A_thread_gets_one_tally_per_cache_and_threads_get_their_own()
    {
        var first = new ReadTallies();
        var second = new ReadTallies();
        ReadTally mine = Tally(first);
        // The slot's cached tally belongs to the last cache read: reading another and coming back must find the same one
        // again (a new tally each time would still sum right but grow without bound; another thread's would lose counts).
        ReadTally mineOfSecond = Tally(second);
        Assert.NotSame(mine, mineOfSecond);
        Assert.Same(mine, Tally(first));
        Assert.Same(mineOfSecond, Tally(second));
        ReadTally? theirs = null;
        var thread = new Thread(() => theirs = Tally(first));
        thread.Start();
        thread.Join();
        Assert.NotNull(theirs);
        Assert.NotSame(mine, theirs);
        Assert.Equal(2, first.TallyCount);
        Assert.Equal(1, second.TallyCount);
        // Stripes are dealt in turn: the two threads that read the first cache write different stripes of its read buffer.
        Assert.NotEqual(mine.Stripe, theirs!.Stripe);
    }

    [Fact]
    public void Counts_of_threads_that_have_exited_stay_in_the_sums()
    {
        var tallies = new ReadTallies();
        var threads = Enumerable.Range(0, 4).Select(t => new Thread(() =>
        {
            ReadTally tally = Tally(tallies);
            for (int i = 0; i < 1000; i++) tally.Hit();
            for (int i = 0; i <= t; i++) tally.Miss();
        })).ToArray();
        foreach (var t in threads) t.Start();
        foreach (var t in threads) t.Join();
        Assert.Equal(4000, tallies.Hits);
        Assert.Equal(1 + 2 + 3 + 4, tallies.Misses);
    }

    [Fact]
    public void Hits_and_misses_summed_over_threads_equal_the_reads_each_cache_served()
    {
        // Four threads alternate between two caches, so each thread's slot switches tallies on every read: a read
        // counted in the other cache's tally, or a lost increment (a tally two threads shared), breaks the sums.
        using var a = new NativeCache(new NativeCacheOptions { MaxBytes = 1 << 20 });
        using var b = new NativeCache(new NativeCacheOptions { MaxBytes = 1 << 20 });
        for (int k = 0; k < 64; k++)
        {
            a.Set($"key-{k}", [1, 2, 3]);
            b.Set($"key-{k}", [4]);
        }
        const int Threads = 4, Rounds = 5000;
        var threads = Enumerable.Range(0, Threads).Select(t => new Thread(() =>
        {
            var writer = new ArrayBufferWriter<byte>();
            for (int i = 0; i < Rounds; i++)
            {
                writer.ResetWrittenCount();
                // a: hits only; b: a hit when i is even, a miss (key 64 and above is absent) when odd.
                Assert.True(a.TryGet($"key-{i % 64}", writer));
                Assert.Equal(i % 2 == 0, b.TryGet($"key-{(i % 2 == 0 ? i % 64 : 64 + i % 64)}", writer));
            }
        })).ToArray();
        foreach (var t in threads) t.Start();
        foreach (var t in threads) t.Join();
        Assert.Equal(Threads * Rounds, a.GetStatistics().Hits);
        Assert.Equal(0, a.GetStatistics().Misses);
        Assert.Equal(Threads * Rounds / 2, b.GetStatistics().Hits);
        Assert.Equal(Threads * Rounds / 2, b.GetStatistics().Misses);
    }

    private static ReadTally Tally(ReadTallies tallies)
    {
        var slot = ReaderGate.Enter();
        try
        {
            return tallies.For(slot);
        }
        finally
        {
            ReaderGate.Exit(slot);
        }
    }
}
