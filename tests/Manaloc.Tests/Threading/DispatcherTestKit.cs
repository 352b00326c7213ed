using Manaloc.Threading;

namespace Manaloc.Tests.Threading;

/// <summary>Helpers of the dispatcher tests: bounded waits (watchdogs, never timing assertions) and a blocking item.</summary>
internal static class DispatcherTestKit
{
    /// <summary>Generous bound for things that should happen "soon": only a hang reaches it.</summary>
    public static readonly TimeSpan Watchdog = TimeSpan.FromSeconds(30);

    public static void WaitUntil(Func<bool> condition, string what)
    {
        var limit = DateTime.UtcNow + Watchdog;
        while (!condition())
        {
            Assert.True(DateTime.UtcNow < limit, $"watchdog: {what} did not happen within {Watchdog.TotalSeconds} s");
            Thread.Sleep(1);
        }
    }

    public static T Await<T>(Task<T> task, string what)
    {
        Assert.True(task.Wait(Watchdog), $"watchdog: {what} did not finish within {Watchdog.TotalSeconds} s");
        return task.Result;
    }

    public static void Await(Task task, string what)
        => Assert.True(task.Wait(Watchdog), $"watchdog: {what} did not finish within {Watchdog.TotalSeconds} s");

    /// <summary>Occupies every worker with an item that waits for <paramref name="gate"/>, and waits until they all hold one.</summary>
    public static void BlockWorkers(DedicatedThreadDispatcher dispatcher, ManualResetEventSlim gate)
    {
        int started = 0;
        for (int i = 0; i < dispatcher.ThreadCount; i++)
        {
            dispatcher.Post(() =>
            {
                Interlocked.Increment(ref started);
                gate.Wait();
            });
        }
        WaitUntil(() => Volatile.Read(ref started) == dispatcher.ThreadCount && dispatcher.QueuedCount == 0, "every worker picking up a blocking item");
    }
}
