using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

/// <summary>Runs alone: its tests count the process's thread indexes and wait for an exited thread's index to come back,
/// which threads of test classes running at the same time would take.</summary>
[CollectionDefinition(nameof(ThreadIndexCollection), DisableParallelization = true)]
public sealed class ThreadIndexCollection;

/// <summary>The per-thread index that record arrays' view tables are indexed by: unique among live threads, stable on its
/// thread, and given back once its thread has exited, so tables stay as long as the threads alive at once.</summary>
[Collection(nameof(ThreadIndexCollection))]
public sealed class ThreadIndexTests
{
    private static int IndexOnNewThread(Action? alsoOnThread = null)
    {
        int index = 0;
        var thread = new Thread(() =>
        {
            index = ThreadIndex.Acquire();
            alsoOnThread?.Invoke();
        });
        thread.Start();
        thread.Join();
        return index;
    }

    /// <summary>Runs the finalizers of exited threads' leases, so their indexes are free again.</summary>
    internal static void CollectExitedThreads()
    {
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
    }

    /// <summary>Collects until at most <paramref name="inUse"/> indexes are handed out, for up to ten seconds; returns
    /// whether they were. An exited thread's lease is finalized only once the runtime has let go of that thread's
    /// statics: one collection is usually enough, but on a loaded machine (test assemblies running side by side) some
    /// exited threads were still held after it, and their indexes came back a collection or two later.</summary>
    internal static bool CollectUntilInUseAtMost(int inUse)
    {
        var waited = System.Diagnostics.Stopwatch.StartNew();
        while (true)
        {
            CollectExitedThreads();
            if (ThreadIndex.InUse <= inUse) return true;
            if (waited.Elapsed > TimeSpan.FromSeconds(10)) return false;
            Thread.Sleep(10);
        }
    }

    /// <summary>Starts new threads, one at a time, each running <paramref name="onThread"/> right after taking its index,
    /// until one is given <paramref name="index"/> (an exited thread's); returns whether one was. The threads stay alive
    /// until the end: indexes are handed out lowest first, so each takes the next free one, and one takes the exited
    /// thread's once its lease has been finalized. <paramref name="onThread"/> runs on every attempt's thread and may
    /// assert (its failure is rethrown here).</summary>
    internal static bool UntilAThreadIsGiven(int index, Action onThread, int attempts = 64)
    {
        using var release = new ManualResetEventSlim();
        var waiting = new List<Thread>();
        try
        {
            for (int attempt = 0; attempt < attempts; attempt++)
            {
                CollectExitedThreads();
                int given = 0;
                Exception? failure = null;
                using var ran = new ManualResetEventSlim();
                var next = new Thread(() =>
                {
                    given = ThreadIndex.Acquire();
                    try { onThread(); }
                    catch (Exception e) { failure = e; }
                    ran.Set();
                    release.Wait();
                });
                next.Start();
                waiting.Add(next);
                ran.Wait();
                if (failure is not null) throw new Xunit.Sdk.XunitException($"the thread given index {given} failed: {failure}");
                if (given == index) return true;
            }
            return false;
        }
        finally
        {
            release.Set();
            foreach (var thread in waiting) thread.Join();
        }
    }

    [Fact]
    public void A_threads_index_is_stable_and_live_threads_have_different_ones()
    {
        int mine = ThreadIndex.Acquire();
        Assert.True(mine > 0);
        Assert.Equal(mine, ThreadIndex.Acquire());
        Assert.Equal(mine, ThreadIndex.Current);
        const int Threads = 16;
        var indexes = new int[Threads];
        using var allHaveOne = new Barrier(Threads + 1);
        var threads = Enumerable.Range(0, Threads).Select(t => new Thread(() =>
        {
            Assert.Equal(0, ThreadIndex.Current); // none before the first Acquire
            indexes[t] = ThreadIndex.Acquire();
            allHaveOne.SignalAndWait(); // all alive at once
            allHaveOne.SignalAndWait();
        })).ToArray();
        foreach (var thread in threads) thread.Start();
        allHaveOne.SignalAndWait();
        allHaveOne.SignalAndWait();
        foreach (var thread in threads) thread.Join();
        Assert.Equal(Threads + 1, indexes.Append(mine).Distinct().Count());
        Assert.DoesNotContain(0, indexes);
    }

    [Fact]
    public void Exited_threads_give_their_indexes_back_so_indexes_do_not_grow_with_every_thread()
    {
        CollectExitedThreads();
        int before = ThreadIndex.InUse;
        for (int wave = 0; wave < 10; wave++)
        {
            for (int t = 0; t < 20; t++) IndexOnNewThread();
            CollectUntilInUseAtMost(before);
        }
        // 200 threads came and went; other tests running beside this one hold a few indexes at most.
        Assert.True(ThreadIndex.InUse <= before + 24, $"{ThreadIndex.InUse} indexes in use after 200 threads exited ({before} before)");
    }
}
