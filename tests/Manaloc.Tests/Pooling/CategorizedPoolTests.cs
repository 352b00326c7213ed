using Manaloc.Pooling;

namespace Manaloc.Tests.Pooling;

/// <summary>What only the categorized pool promises: returns racing Dispose never throw and never keep their object.</summary>
public sealed class CategorizedPoolTests
{
    [Fact]
    public void Returns_to_new_categories_racing_Dispose_never_throw()
    {
        for (int iter = 0; iter < 50; iter++)
        {
            var pool = new CategorizedPool<PooledThing>(PoolPolicies.New<PooledThing>(), new PoolOptions { Name = "categories", TrimAfterGen2 = false });
            Exception? failure = null;
            var afterDispose = new List<PooledThing>();
            using var started = new ManualResetEventSlim();
            using var disposed = new ManualResetEventSlim();
            var returner = new Thread(() =>
            {
                try
                {
                    started.Set();
                    for (int i = 0; !disposed.IsSet && i < 100_000; i++) pool.Return("c" + i, new PooledThing());
                    var last = new PooledThing();
                    afterDispose.Add(last);
                    pool.Return("after", last); // strictly after Dispose returned
                }
                catch (Exception e)
                {
                    failure = e;
                }
            });
            returner.Start();
            started.Wait();
            pool.Dispose();
            disposed.Set();
            Assert.True(returner.Join(TimeSpan.FromSeconds(30)), "returning thread hung");
            Assert.Null(failure);
            Assert.All(afterDispose, t => Assert.True(t.Disposed));
        }
    }
}
