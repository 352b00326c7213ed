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
}
