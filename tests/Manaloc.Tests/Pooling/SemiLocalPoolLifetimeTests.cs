using System.Reflection;
using Manaloc.Pooling;

namespace Manaloc.Tests.Pooling;

/// <summary>The semi-local pool's end of life: Dispose racing returns, budget given back, pools dropped without Dispose.</summary>
public sealed class SemiLocalPoolLifetimeTests
{
    private static int SlotId(object pool) => (int)pool.GetType().GetField("_slotId", BindingFlags.NonPublic | BindingFlags.Instance)!.GetValue(pool)!;

    [Fact]
    public void Returns_after_Dispose_completed_are_dropped()
    {
        int kept = 0;
        for (int iter = 0; iter < 200; iter++)
        {
            var pool = new SemiLocalPool<PooledThing>(PoolPolicies.New<PooledThing>(),
                new PoolOptions { Name = "dispose-race", LocalCapacity = 1 << 20, BatchSize = 64, MaxRetained = 1 << 20, TrimAfterGen2 = false });
            var first = new PooledThing();
            var later = new PooledThing();
            using var go = new Barrier(2);
            using var disposed = new ManualResetEventSlim();
            var b = new Thread(() =>
            {
                go.SignalAndWait();
                pool.Return(first); // slow path: creates the stack (a large Slot[]: a wide window for Dispose)
                disposed.Wait();
                pool.Return(later); // strictly after Dispose returned
            });
            b.Start();
            go.SignalAndWait();
            Thread.SpinWait(iter * 50);
            pool.Dispose();
            disposed.Set();
            Assert.True(b.Join(TimeSpan.FromSeconds(30)), "returning thread hung");
            if (!later.Disposed) kept++;
        }
        Assert.Equal(0, kept);
    }

    // Two threads return a batch, then rent it all back (stack empty, credit 8 each = the whole cap of 16),
    // then block. extraRent: each rents one more (its stack and the shared tier are dry: it creates and
    // gives its credit back); else the test trims, and each thread serves the request on one more rent.
    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Empty_stacks_of_blocked_threads_give_their_credit_back(bool extraRent)
    {
        using var pool = new SemiLocalPool<PooledThing>(PoolPolicies.New<PooledThing>(),
            new PoolOptions { Name = "credit", LocalCapacity = 8, BatchSize = 8, MaxRetained = 16, TrimAfterGen2 = false });
        using var hold = new ManualResetEventSlim();
        using var emptied = new CountdownEvent(2);
        using var go = new ManualResetEventSlim();
        using var ready = new CountdownEvent(2);
        var threads = Enumerable.Range(0, 2).Select(_ => new Thread(() =>
        {
            var things = Enumerable.Range(0, 8).Select(_ => pool.Rent()).ToArray();
            foreach (var t in things) pool.Return(t);
            things = Enumerable.Range(0, 8).Select(_ => pool.Rent()).ToArray(); // stack empty, credit 8 kept
            emptied.Signal();
            go.Wait();
            var extra = pool.Rent(); // slow path: serves the trim request, or finds everything dry
            ready.Signal();
            hold.Wait();
            GC.KeepAlive(things);
            GC.KeepAlive(extra);
        })).ToArray();
        foreach (var t in threads) t.Start();
        try
        {
            Assert.True(emptied.Wait(TimeSpan.FromSeconds(30)), "threads did not empty their stacks");
            Assert.Equal(16, pool.BudgetInUse);
            if (!extraRent)
            {
                pool.Trim();
            }
            go.Set();
            Assert.True(ready.Wait(TimeSpan.FromSeconds(30)), "threads did not rent");
            Assert.Equal(0, pool.BudgetInUse);
            for (int i = 0; i < 10; i++) pool.Return(pool.Rent());
            var stats = pool.GetStatistics();
            Assert.Equal(1, stats.Retained); // the main thread keeps what it returns
        }
        finally
        {
            go.Set();
            hold.Set();
            foreach (var t in threads) t.Join();
        }
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Pools_dropped_without_Dispose_free_their_objects_and_slot_ids(bool trimAfterGen2)
    {
        var weak = new List<WeakReference>();
        var leases = new List<SlotLease>();
        MakeAndDrop(weak, leases, trimAfterGen2);
        DroppedOwners.AssertCollectedAndReleased(weak, leases);
    }

    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private static void MakeAndDrop(List<WeakReference> weak, List<SlotLease> leases, bool trimAfterGen2)
    {
        for (int i = 0; i < 100; i++)
        {
            var pool = new SemiLocalPool<PooledThing>(PoolPolicies.New<PooledThing>(), new PoolOptions { Name = "dropped" + i, TrimAfterGen2 = trimAfterGen2 });
            leases.Add(pool.Lease);
            var thing = pool.Rent();
            weak.Add(new WeakReference(thing));
            pool.Return(thing); // kept on this thread's stack, reachable from the thread's slot array
        }
    }

    private sealed class Bomb : IDisposable
    {
        public bool Disposed;
        public bool Throw;

        public void Dispose()
        {
            Disposed = true;
            if (Throw) throw new InvalidOperationException("boom");
        }
    }

    [Fact]
    public void A_throwing_object_Dispose_in_pool_Dispose_drops_the_rest_and_frees_the_slot_id()
    {
        var pool = new SemiLocalPool<Bomb>(PoolPolicies.Create(() => new Bomb()), new PoolOptions { Name = "bombs", LocalCapacity = 4, BatchSize = 2 });
        var lease = pool.Lease;
        var items = Enumerable.Range(0, 40).Select(_ => pool.Rent()).ToArray(); // most spill into the shared tier
        items[0].Throw = true;
        items[39].Throw = true; // one in the shared tier, one on this thread's stack
        foreach (var b in items) pool.Return(b);
        Assert.ThrowsAny<Exception>(() => pool.Dispose());
        pool.Dispose(); // idempotent
        Assert.Equal(0, items.Count(b => !b.Disposed));
        Assert.True(lease.IsReleased);
        Assert.Equal(0, pool.GetStatistics().Retained);
    }

    [Fact]
    public void A_throwing_object_Dispose_in_LockedPool_Dispose_drops_the_rest()
    {
        var pool = new LockedPool<Bomb>(PoolPolicies.Create(() => new Bomb()), new PoolOptions { Name = "locked-bombs" });
        var items = Enumerable.Range(0, 10).Select(_ => pool.Rent()).ToArray();
        items[0].Throw = true;
        items[5].Throw = true;
        foreach (var b in items) pool.Return(b);
        var e = Assert.Throws<AggregateException>(() => pool.Dispose());
        Assert.Equal(2, e.InnerExceptions.Count);
        pool.Dispose();
        Assert.Equal(0, items.Count(b => !b.Disposed));
        Assert.Equal(0, pool.GetStatistics().Retained);
    }
}
