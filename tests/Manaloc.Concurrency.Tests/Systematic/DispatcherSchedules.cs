using Manaloc.Concurrency.Tests.Mutants;
using Manaloc.Threading;
using Microsoft.Coyote.Specifications;
using Xunit.Abstractions;

namespace Manaloc.Concurrency.Tests.Systematic;

/// <summary>Post, shut down, wait for the workers: what the scenario does to a dispatcher (the real one, or a broken one).</summary>
public interface IDispatcherUnderTest
{
    bool TryPost(Action item);
    IReadOnlyList<Action> Shutdown();
    void WaitForWorkers();
}

public sealed class DispatcherSchedules(ITestOutputHelper output)
{
    private sealed class Real(DedicatedThreadDispatcher dispatcher) : IDispatcherUnderTest
    {
        public bool TryPost(Action item) => dispatcher.TryPost(item);
        public IReadOnlyList<Action> Shutdown() => dispatcher.Shutdown(TimeSpan.Zero);
        public void WaitForWorkers() => dispatcher.Completion.Wait();
    }

    // Invariant: every item run or handed back exactly once. A producer posts three items while the
    // main thread shuts the dispatcher down (drain timeout zero: what is still queued is handed back).
    // An accepted item runs once or comes back once, never both, never neither; a refused item
    // never runs.
    private static long s_ran, s_handedBack, s_refused;

    internal static void ShutdownRacesPosts(Func<IDispatcherUnderTest> create)
    {
        var dispatcher = create();
        const int Items = 3;
        var runs = new int[Items];
        var items = new Action[Items];
        for (int i = 0; i < Items; i++)
        {
            int index = i;
            items[i] = () => Interlocked.Increment(ref runs[index]);
        }
        var accepted = new bool[Items];
        var producer = Task.Run(() =>
        {
            for (int i = 0; i < Items; i++) accepted[i] = dispatcher.TryPost(items[i]);
        });
        var handedBack = dispatcher.Shutdown();
        producer.Wait();
        dispatcher.WaitForWorkers();
        for (int i = 0; i < Items; i++)
        {
            int returned = handedBack.Count(a => ReferenceEquals(a, items[i]));
            int ran = Volatile.Read(ref runs[i]);
            Interlocked.Add(ref s_ran, ran);
            Interlocked.Add(ref s_handedBack, returned);
            if (!accepted[i]) Interlocked.Increment(ref s_refused);
            if (accepted[i]) Specification.Assert(ran + returned == 1, $"item {i} was accepted, then ran {ran} time(s) and was handed back {returned} time(s)");
            else Specification.Assert(ran == 0 && returned == 0, $"item {i} was refused, then ran {ran} time(s) and was handed back {returned} time(s)");
        }
    }

    [CoyoteFact]
    public void Shutdown_racing_posts_runs_or_hands_back_every_item_once()
    {
        s_ran = s_handedBack = s_refused = 0;
        Assert.Equal(0, Explorer.Explore(() => ShutdownRacesPosts(() =>
            new Real(new DedicatedThreadDispatcher(new DispatcherOptions { ThreadCount = 1, Capacity = 4, FullMode = FullQueueMode.FailFast }))), output, noRepro: true).Bugs);
        output.WriteLine($"outcomes over all schedules: {s_ran} ran, {s_handedBack} handed back, {s_refused} refused");
        Console.WriteLine($"coyote-outcomes dispatcher: {s_ran} ran, {s_handedBack} handed back, {s_refused} refused");
        // The schedules reached all three outcomes: the race was explored, not one lucky order.
        Assert.True(s_ran > 0 && s_handedBack > 0 && s_refused > 0, $"{s_ran} ran, {s_handedBack} handed back, {s_refused} refused");
    }

    [CoyoteFact]
    public void Mutant_that_checks_closed_outside_the_lock_is_caught()
    {
        var outcome = Explorer.Explore(() => ShutdownRacesPosts(() => new CheckThenEnqueueDispatcher()), output, noRepro: true);
        Assert.True(outcome.Bugs > 0, "Coyote did not find the broken dispatcher's lost item");
        Assert.Contains("was accepted", outcome.FirstBug);
    }
}
