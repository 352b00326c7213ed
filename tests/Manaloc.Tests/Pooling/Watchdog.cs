namespace Manaloc.Tests.Pooling;

/// <summary>Runs worker threads and fails if no progress is reported for 10 s (no timing assertion otherwise).</summary>
public static class Watchdog
{
    public static void Run(int threads, Action<int, Action> work)
    {
        long progress = 0;
        Exception? failure = null;
        var workers = new Thread[threads];
        for (int t = 0; t < threads; t++)
        {
            int index = t;
            workers[t] = new Thread(() =>
            {
                try { work(index, () => Interlocked.Increment(ref progress)); }
                catch (Exception e) { Interlocked.CompareExchange(ref failure, e, null); }
            }) { IsBackground = true };
            workers[t].Start();
        }
        long seen = -1;
        foreach (var worker in workers)
        {
            while (!worker.Join(TimeSpan.FromSeconds(10)))
            {
                long now = Interlocked.Read(ref progress);
                Assert.True(now != seen, "no progress for 10 s: a lost wakeup or a livelock");
                seen = now;
            }
        }
        if (failure is not null) throw new InvalidOperationException("A worker failed: " + failure.Message, failure);
    }
}
