using Manaloc.Pooling;

namespace Manaloc.Tests.Pooling;

/// <summary>What only the semi-local pool promises: thread stacks, churn, trimming, cross-thread returns.</summary>
public sealed class SemiLocalPoolTests
{
    private static SemiLocalPool<PooledThing> Create(PoolOptions options) => new(PoolPolicies.New<PooledThing>(), options);

    [Fact]
    public void Steady_state_is_served_from_the_thread_stack()
    {
        using var pool = Create(new PoolOptions { Name = "steady" });
        for (int i = 0; i < 100; i++) pool.Return(pool.Rent());
        var stats = pool.GetStatistics();
        Assert.Equal(100, stats.Rents);
        Assert.Equal(99, stats.LocalHits);
        Assert.Equal(1, stats.Creations);
    }

    [Fact]
    public void Pools_used_alternately_on_one_thread_keep_exact_counts_and_their_own_objects()
    {
        using var first = Create(new PoolOptions { Name = "alternate-1" });
        using var second = Create(new PoolOptions { Name = "alternate-2" });
        for (int i = 0; i < 100; i++)
        {
            var a = first.Rent();
            var b = second.Rent();
            Assert.NotSame(a, b);
            first.Return(a);
            second.Return(b);
        }
        foreach (var pool in new[] { first, second })
        {
            var stats = pool.GetStatistics();
            Assert.Equal(100, stats.Rents);
            Assert.Equal(99, stats.LocalHits);
            Assert.Equal(1, stats.Creations);
            Assert.Equal(1, stats.Retained);
        }
    }

    [Fact]
    public void Debug_mode_and_resetting_policies_apply_when_the_thread_used_a_plain_pool_last()
    {
        using var plain = Create(new PoolOptions { Name = "plain-last" });
        int resets = 0;
        using var resetting = new SemiLocalPool<PooledThing>(PoolPolicies.Create(() => new PooledThing(), _ => { resets++; return true; }), new PoolOptions { Name = "resetting" });
        using var debug = Create(new PoolOptions { Name = "debug-after-plain", DebugMode = true });
        for (int i = 0; i < 10; i++)
        {
            plain.Return(plain.Rent()); // the plain pool's stack becomes this thread's last one
            resetting.Return(resetting.Rent());
        }
        Assert.Equal(10, resets);
        var d = debug.Rent();
        debug.Return(d);
        plain.Return(plain.Rent());
        Assert.Throws<InvalidOperationException>(() => debug.Return(d));
        Assert.Throws<InvalidOperationException>(() => debug.Return(new PooledThing()));
    }

    [Fact]
    public void Thread_churn_does_not_grow_the_pool()
    {
        const int Cap = 200;
        using var pool = Create(new PoolOptions { Name = "churn", BatchSize = 8, LocalCapacity = 32, MaxRetained = Cap });
        int maxStacks = 0;
        for (int wave = 0; wave < 125; wave++) // 125 waves of 8 short-lived threads = 1,000 threads
        {
            Watchdog.Run(8, (_, progress) =>
            {
                var held = new PooledThing[20];
                for (int i = 0; i < held.Length; i++) held[i] = pool.Rent();
                foreach (var t in held) pool.Return(t);
                progress();
            });
            maxStacks = Math.Max(maxStacks, pool.RegisteredThreadStacks);
            var stats = pool.GetStatistics();
            Assert.InRange(stats.Retained, 0, Cap);
            Assert.InRange(pool.BudgetInUse, stats.Retained, Cap);
        }
        // Stacks of exited threads are reclaimed whenever a new thread registers: never more than two waves' worth.
        Assert.InRange(maxStacks, 1, 17);
        var final = pool.GetStatistics();
        Assert.Equal(20_000, final.Rents);
        Assert.True(final.Creations < 20_000, "exited threads' objects were reused");
    }

    [Fact]
    public void Idle_objects_are_trimmed_after_gen2_collections()
    {
        using var pool = Create(new PoolOptions { Name = "gen2", BatchSize = 4, LocalCapacity = 8 });
        var things = Enumerable.Range(0, 100).Select(_ => pool.Rent()).ToArray();
        foreach (var t in things) pool.Return(t);
        long before = pool.GetStatistics().Retained;
        Assert.True(before > 8, "objects spilled to the shared tier");
        for (int i = 0; i < 4 && pool.GetStatistics().Retained > 8; i++)
        {
            GC.Collect(2, GCCollectionMode.Forced, blocking: true);
            GC.WaitForPendingFinalizers();
        }
        var stats = pool.GetStatistics();
        Assert.True(stats.Retained <= 8, $"shared tier trimmed (retained {stats.Retained})");
        Assert.True(stats.Trimmed >= before - 8);
        // The idle thread stack was asked to empty itself; it does so on its next return.
        pool.Return(new PooledThing());
        Assert.True(pool.GetStatistics().Retained <= 1);
    }

    [Fact]
    public void Under_memory_pressure_a_gen2_collection_trims_everything_at_once()
    {
        using var pool = Create(new PoolOptions { Name = "pressure", BatchSize = 4, LocalCapacity = 8 });
        pool.PressureProbe = () => true;
        var things = Enumerable.Range(0, 60).Select(_ => pool.Rent()).ToArray();
        foreach (var t in things) pool.Return(t);
        pool.Rent(); // the shared tier and this stack were just used: not idle
        GC.Collect(2, GCCollectionMode.Forced, blocking: true);
        GC.WaitForPendingFinalizers();
        pool.Return(new PooledThing()); // the stack serves the trim request on its next return
        var stats = pool.GetStatistics();
        Assert.True(stats.Retained <= 1, $"retained {stats.Retained}");
        Assert.True(stats.Trimmed >= 58);
        Assert.True(things.Count(t => t.Disposed) >= 58, "trimmed objects are disposed");
    }

    [Fact]
    public void Objects_returned_on_another_thread_come_back()
    {
        using var pool = Create(new PoolOptions { Name = "cross", BatchSize = 4, LocalCapacity = 8, MaxRetained = 1000 });
        var rented = Enumerable.Range(0, 64).Select(_ => pool.Rent()).ToArray();
        var returner = new Thread(() => { foreach (var t in rented) pool.Return(t); });
        returner.Start();
        returner.Join();
        var again = Enumerable.Range(0, 32).Select(_ => pool.Rent()).ToHashSet();
        Assert.True(again.Overlaps(rented), "the returning thread's spills reach the renter through the shared tier");
        Assert.Equal(64, pool.GetStatistics().Creations);
    }

    [Fact]
    public void Cross_thread_producer_consumer_keeps_the_invariants()
    {
        using var pool = Create(new PoolOptions { Name = "pc", BatchSize = 8, LocalCapacity = 16, MaxRetained = 128 });
        var queue = new System.Collections.Concurrent.BlockingCollection<PooledThing>(256);
        Watchdog.Run(2, (index, progress) =>
        {
            if (index == 0)
            {
                for (int i = 0; i < 50_000; i++)
                {
                    var t = pool.Rent();
                    Assert.Equal(0, Interlocked.Exchange(ref t.Out, 1));
                    queue.Add(t);
                    if ((i & 1023) == 0) progress();
                }
                queue.CompleteAdding();
            }
            else
            {
                foreach (var t in queue.GetConsumingEnumerable())
                {
                    Assert.Equal(1, Interlocked.Exchange(ref t.Out, 0));
                    pool.Return(t);
                }
            }
        });
        var stats = pool.GetStatistics();
        Assert.Equal(50_000, stats.Rents);
        Assert.True(stats.SharedTransfers > 0);
        Assert.InRange(pool.BudgetInUse, stats.Retained, 128);
        Assert.True(stats.Creations < 50_000, "objects flowed back to the renter");
    }

    [Fact]
    public void Trimming_while_threads_rent_and_return_never_hands_an_object_out_twice()
    {
        using var pool = Create(new PoolOptions { Name = "trim-race", BatchSize = 4, LocalCapacity = 8, MaxRetained = 48 });
        int stop = 0, started = 0; // workers start once the trimmer runs, so the two overlap
        Watchdog.Run(3, (index, progress) =>
        {
            if (index == 2)
            {
                // The trimmer: asks every stack to empty itself, over and over, while the owners work.
                while (Volatile.Read(ref stop) == 0)
                {
                    Volatile.Write(ref started, 1);
                    pool.Trim(); // no progress() here: only the workers' progress counts
                    Thread.Yield();
                }
                return;
            }
            var held = new Stack<PooledThing>();
            var random = new Random(index);
            while (Volatile.Read(ref started) == 0) Thread.Yield();
            for (int i = 0; i < 200_000; i++)
            {
                if (held.Count < 6 && (held.Count == 0 || random.Next(2) == 0))
                {
                    var t = pool.Rent();
                    Assert.Equal(0, Interlocked.Exchange(ref t.Out, 1));
                    Assert.False(t.Disposed, "a trimmed (disposed) object was handed out");
                    held.Push(t);
                }
                else
                {
                    var t = held.Pop();
                    Assert.Equal(1, Interlocked.Exchange(ref t.Out, 0));
                    pool.Return(t);
                }
                if ((i & 1023) == 0) progress();
            }
            while (held.Count > 0) { var t = held.Pop(); t.Out = 0; pool.Return(t); }
            if (index == 0) Volatile.Write(ref stop, 1);
        });
        var stats = pool.GetStatistics();
        Assert.InRange(pool.BudgetInUse, stats.Retained, 48);
    }

    [Fact]
    public void Many_pool_instances_keep_their_objects_apart_and_reused_ids_never_see_stale_stacks()
    {
        var pools = Enumerable.Range(0, 100).Select(i => Create(new PoolOptions { Name = "many" + i, TrimAfterGen2 = false })).ToArray();
        var things = new PooledThing[pools.Length];
        SemiLocalPool<PooledThing>[]? fresh = null;
        var freshRents = new List<PooledThing>();
        Exception? failure = null;
        using var filled = new ManualResetEventSlim();
        using var disposed = new ManualResetEventSlim();
        var worker = new Thread(() =>
        {
            try
            {
                for (int i = 0; i < pools.Length; i++) things[i] = pools[i].Rent();
                for (int i = 0; i < pools.Length; i++) pools[i].Return(things[i]);
                for (int i = 0; i < pools.Length; i++) Assert.Same(things[i], pools[i].Rent());
                for (int i = 0; i < pools.Length; i++) pools[i].Return(things[i]); // left on this thread's stacks
                filled.Set();
                if (!disposed.Wait(TimeSpan.FromSeconds(30))) throw new TimeoutException("pools were not disposed");
                // The disposed pools' stacks are still in this thread's slot array, never touched since:
                // the fresh pools reuse their ids and must not take them for their own (token check).
                foreach (var p in fresh!) freshRents.Add(p.Rent());
            }
            catch (Exception e)
            {
                failure = e;
            }
        });
        worker.Start();
        Assert.True(filled.Wait(TimeSpan.FromSeconds(30)), "worker did not fill its stacks");
        foreach (var p in pools) p.Dispose(); // from this thread: the worker's stacks stay as they are
        fresh = Enumerable.Range(0, 100).Select(i => Create(new PoolOptions { Name = "fresh" + i, TrimAfterGen2 = false })).ToArray();
        disposed.Set();
        Assert.True(worker.Join(TimeSpan.FromSeconds(30)), "worker hung");
        Assert.Null(failure);
        Assert.Equal(100, freshRents.Count);
        foreach (var t in freshRents) Assert.DoesNotContain(t, things);
        foreach (var p in fresh) p.Dispose();
    }

    [Fact]
    public void Options_out_of_range_are_rejected()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => Create(new PoolOptions { LocalCapacity = 0 }));
        Assert.Throws<ArgumentOutOfRangeException>(() => Create(new PoolOptions { BatchSize = 100, LocalCapacity = 10 }));
        Assert.Throws<ArgumentOutOfRangeException>(() => Create(new PoolOptions { MaxRetained = -1 }));
        Assert.Throws<ArgumentException>(() => Create(new PoolOptions { Name = "" }));
        Assert.Throws<ArgumentNullException>(() => new SemiLocalPool<PooledThing>((PoolPolicy<PooledThing>)null!));
        Assert.Throws<ArgumentNullException>(() => new SemiLocalPool<PooledThing>((Func<PooledThing>)null!));
    }
}
