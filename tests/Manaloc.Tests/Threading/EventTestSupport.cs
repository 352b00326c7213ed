using System.Diagnostics;

namespace Manaloc.Tests.Threading;

/// <summary>Progress checks for the event and lock tests: fail on a stall, never on slowness.</summary>
internal static class EventTestSupport
{
    /// <summary>How long nothing may change before a test calls it a stall.</summary>
    public static readonly TimeSpan Stall = TimeSpan.FromSeconds(10);

    /// <summary>Polls until <paramref name="condition"/> holds; fails if it has not after <paramref name="limit"/> (default <see cref="Stall"/>).</summary>
    public static void WaitUntil(Func<bool> condition, string what, TimeSpan? limit = null)
    {
        var bound = limit ?? Stall;
        var start = Stopwatch.GetTimestamp();
        while (!condition())
        {
            if (Stopwatch.GetElapsedTime(start) > bound) Assert.Fail($"Stalled: {what} did not happen within {bound.TotalSeconds} s.");
            Thread.Sleep(1);
        }
    }

    /// <summary>
    /// Joins <paramref name="threads"/>, failing if <paramref name="progress"/> stops changing for
    /// <see cref="Stall"/> while any of them is still running (a lost wakeup or a deadlock).
    /// </summary>
    public static void JoinWithWatchdog(IReadOnlyList<Thread> threads, Func<long> progress, Func<string> describe)
    {
        long last = progress();
        var lastChange = Stopwatch.GetTimestamp();
        while (threads.Any(t => t.IsAlive))
        {
            Thread.Sleep(50);
            long now = progress();
            if (now != last)
            {
                last = now;
                lastChange = Stopwatch.GetTimestamp();
            }
            else if (Stopwatch.GetElapsedTime(lastChange) > Stall)
            {
                Assert.Fail($"No progress for {Stall.TotalSeconds} s at {now}: {describe()}");
            }
        }
        foreach (var t in threads) t.Join();
    }

    /// <summary>Starts a background thread running <paramref name="body"/>, capturing its exception into <paramref name="errors"/>.</summary>
    public static Thread Start(Action body, List<Exception> errors, string name)
    {
        var thread = new Thread(() =>
        {
            try { body(); }
            catch (Exception e) { lock (errors) errors.Add(e); }
        }) { IsBackground = true, Name = name };
        thread.Start();
        return thread;
    }
}
