using Manaloc.Pooling;

namespace Manaloc.Tests.Pooling;

/// <summary>
/// Disposing a pool disposes every object it holds, including those on the stacks of live threads that
/// never touch the pool again (a thread-pool thread, a blocked worker).
/// </summary>
public sealed class PoolDisposeDrainTests
{
    private const int PerThread = 5;

    /// <summary>Runs <paramref name="use"/> on <paramref name="threads"/> threads that stay alive (blocked) until <paramref name="whileAlive"/> has run.</summary>
    private static void WithLiveThreads(int threads, Action use, Action whileAlive)
    {
        using var used = new CountdownEvent(threads);
        using var release = new ManualResetEventSlim();
        var workers = Enumerable.Range(0, threads).Select(_ => new Thread(() =>
        {
            use();
            used.Signal();
            release.Wait();
        })).ToArray();
        foreach (var w in workers) w.Start();
        try
        {
            Assert.True(used.Wait(TimeSpan.FromSeconds(30)), "workers did not finish their rents");
            whileAlive();
        }
        finally
        {
            release.Set();
            foreach (var w in workers) Assert.True(w.Join(TimeSpan.FromSeconds(30)), "worker hung");
        }
    }

    private static void RentAndReturn(Func<PooledThing> rent, Action<PooledThing> give)
    {
        var held = Enumerable.Range(0, PerThread).Select(_ => rent()).ToArray();
        foreach (var t in held) give(t);
    }

    [Fact]
    public void SemiLocalPool_Dispose_disposes_objects_on_live_threads_stacks()
    {
        var created = new List<PooledThing>();
        var pool = new SemiLocalPool<PooledThing>(() => { var t = new PooledThing(); lock (created) created.Add(t); return t; },
            new PoolOptions { Name = "drain-live", TrimAfterGen2 = false });
        WithLiveThreads(3, () => RentAndReturn(pool.Rent, pool.Return), () =>
        {
            Assert.Equal(3 * PerThread, pool.GetStatistics().Retained);
            pool.Dispose();
            lock (created) Assert.All(created, t => Assert.True(t.Disposed, $"object {t.Id} is still undisposed after Dispose"));
            Assert.Equal(0, pool.GetStatistics().Retained);
        });
        Assert.Equal(3 * PerThread, created.Count);
    }

    [Fact]
    public void CategorizedPool_Dispose_disposes_objects_on_live_threads_stacks()
    {
        var created = new List<PooledThing>();
        var pool = new CategorizedPool<PooledThing>(() => { var t = new PooledThing(); lock (created) created.Add(t); return t; },
            new PoolOptions { Name = "drain-categories", TrimAfterGen2 = false });
        WithLiveThreads(2, () =>
        {
            RentAndReturn(() => pool.Rent("a"), t => pool.Return("a", t));
            RentAndReturn(() => pool.Rent("b"), t => pool.Return("b", t));
        }, () =>
        {
            pool.Dispose();
            lock (created) Assert.All(created, t => Assert.True(t.Disposed, $"object {t.Id} is still undisposed after Dispose"));
        });
        Assert.Equal(2 * 2 * PerThread, created.Count);
    }

    [Fact]
    public void Dispose_racing_rents_and_returns_hands_out_no_disposed_object_and_leaves_none_undisposed()
    {
        for (int iter = 0; iter < 100; iter++)
        {
            var created = new List<PooledThing>();
            var pool = new SemiLocalPool<PooledThing>(() => { var t = new PooledThing(); lock (created) created.Add(t); return t; },
                new PoolOptions { Name = "drain-race", LocalCapacity = 8, BatchSize = 4, TrimAfterGen2 = false });
            var outstanding = new List<PooledThing>();
            Exception? failure = null;
            using var go = new Barrier(3);
            using var stop = new ManualResetEventSlim();
            using var finished = new CountdownEvent(2);
            var workers = Enumerable.Range(0, 2).Select(_ => new Thread(() =>
            {
                var mine = new List<PooledThing>();
                try
                {
                    go.SignalAndWait();
                    for (int i = 0; ; i++)
                    {
                        PooledThing t;
                        try { t = pool.Rent(); }
                        catch (ObjectDisposedException) { break; }
                        // An object handed out must never be one that Dispose already disposed.
                        if (t.Disposed) throw new InvalidOperationException($"rent {i} handed out disposed object {t.Id}");
                        if ((i & 3) == 3) mine.Add(t); // keep some out: they are the caller's, not the pool's
                        else pool.Return(t);
                    }
                }
                catch (Exception e) { failure = e; }
                lock (outstanding) outstanding.AddRange(mine);
                finished.Signal();
                stop.Wait(); // stay alive: the stack must be drained by Dispose, not by thread exit
            })).ToArray();
            foreach (var w in workers) w.Start();
            go.SignalAndWait();
            Thread.SpinWait(iter * 200);
            pool.Dispose();
            try
            {
                // Each worker meets ObjectDisposedException on its next slow path (at most a stack's worth of rents later).
                Assert.True(finished.Wait(TimeSpan.FromSeconds(30)), "a worker kept renting after Dispose");
                Assert.Null(failure);
                HashSet<PooledThing> kept;
                lock (outstanding) kept = [.. outstanding];
                lock (created) Assert.All(created.Where(t => !kept.Contains(t)), t => Assert.True(t.Disposed, $"iteration {iter}: object {t.Id} left undisposed"));
            }
            finally
            {
                stop.Set();
                foreach (var w in workers) Assert.True(w.Join(TimeSpan.FromSeconds(30)), "worker hung");
            }
        }
    }
}
