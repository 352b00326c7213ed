using Manaloc.Threading;

namespace Manaloc.Tests.Threading;

/// <summary>Helpers of the dispatcher tests: bounded waits (watchdogs, never timing assertions) and a blocking item.</summary>
internal static class DispatcherTestKit
{
    /// <summary>Generous bound for things that should happen "soon": only a hang reaches it.</summary>
    public static readonly TimeSpan Watchdog = TimeSpan.FromSeconds(30);

    public static void WaitUntil(Func<bool> condition, string what) => EventTestSupport.WaitUntil(condition, what, Watchdog);

    public static T Await<T>(Task<T> task, string what)
    {
        Assert.True(task.Wait(Watchdog), $"watchdog: {what} did not finish within {Watchdog.TotalSeconds} s");
        return task.Result;
    }

    public static void Await(Task task, string what)
        => Assert.True(task.Wait(Watchdog), $"watchdog: {what} did not finish within {Watchdog.TotalSeconds} s");

    /// <summary>
    /// Starts <paramref name="post"/> on a dedicated thread and waits until that thread is blocked in
    /// a full queue's wait: registered as a waiting producer and in WaitSleepJoin (while registered
    /// it holds the lock until Monitor.Wait, so both together mean it is inside the wait). The
    /// returned task ends with the post's outcome.
    /// </summary>
    public static Task StartBlockedPost(DedicatedThreadDispatcher dispatcher, Action post)
    {
        var outcome = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var thread = new Thread(() =>
        {
            try
            {
                post();
                outcome.SetResult();
            }
            catch (Exception e)
            {
                outcome.SetException(e);
            }
        })
        { IsBackground = true, Name = "blocked producer" };
        int before = dispatcher.WaitingProducerCount;
        thread.Start();
        WaitUntil(
            () => dispatcher.WaitingProducerCount > before && (thread.ThreadState & ThreadState.WaitSleepJoin) != 0,
            "the producer blocking in Post");
        return outcome.Task;
    }

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
        WaitUntil(() => Volatile.Read(ref started) == dispatcher.ThreadCount && dispatcher.GetStatistics().Queued == 0, "every worker picking up a blocking item");
    }
}
