using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Harness;

/// <summary>The harness's clock, budgets, pilot and released-together threads: what they run and report, never how long it took.</summary>
public sealed class LabTimingTests
{
    [Fact]
    public void Time_runs_the_function_once_and_hands_back_its_result()
    {
        int calls = 0;
        var elapsed = LabClock.Time(() => ++calls * 7, out int result);
        Assert.Equal(1, calls);
        Assert.Equal(7, result);
        Assert.True(elapsed >= TimeSpan.Zero);
    }

    [Fact]
    public void A_budget_of_nothing_is_spent_and_an_hour_is_not()
    {
        Assert.True(LabClock.Budget(TimeSpan.Zero).IsSpent);
        Assert.False(LabClock.Budget(TimeSpan.FromHours(1)).IsSpent);
    }

    [Fact]
    public void Ticks_and_milliseconds_convert_back_and_forth()
        => Assert.Equal(250, LabClock.Milliseconds(LabClock.Ticks(TimeSpan.FromMilliseconds(250))), 3);

    [Fact]
    public void A_pilot_grows_the_count_fourfold_to_its_cap_then_repeats_the_kept_count()
    {
        var counts = new List<long>();
        // The minimum is never reached, so the count stops at the cap: the sequence is exact on any machine.
        double nsPerOp = Pilot.NsPerOp(n => counts.Add(n), startOperations: 1, minimum: TimeSpan.FromHours(1), runs: 3, maxOperations: 64);
        Assert.Equal([1L, 4, 16, 64, 64, 64], counts);
        Assert.True(nsPerOp >= 0);
    }

    [Fact]
    public void A_threaded_pilot_grows_the_count_per_thread_and_runs_every_thread()
    {
        var seen = new System.Collections.Concurrent.ConcurrentBag<(int Thread, long Count)>();
        Pilot.NsPerOp(2, (t, n) => seen.Add((t, n)), startPerThread: 8, minimum: TimeSpan.FromHours(1), runs: 2, maxPerThread: 32);
        Assert.Equal([(0, 8L), (0, 32), (0, 32), (1, 8), (1, 32), (1, 32)], seen.Order());
    }

    [Fact]
    public void A_pilot_refuses_no_runs()
        => Assert.Throws<ArgumentOutOfRangeException>(() => Pilot.NsPerOp(_ => { }, 1, TimeSpan.Zero, runs: 0));

    [Fact]
    public void Threads_released_together_each_run_once_and_then_runs_after_all_of_them()
    {
        var ran = new int[4];
        int finishedBeforeThen = -1;
        LabThreads.RunTogether(4, i => Interlocked.Increment(ref ran[i]), then: () => finishedBeforeThen = ran.Sum());
        Assert.Equal([1, 1, 1, 1], ran);
        Assert.Equal(4, finishedBeforeThen);
    }

    [Fact]
    public void A_failing_thread_surfaces_as_an_error_naming_the_crew_with_the_cause_inside()
    {
        var error = Assert.Throws<InvalidOperationException>(() =>
            LabThreads.RunTogether(2, i => { if (i == 1) throw new FormatException("broken on purpose"); }, name: "crew"));
        Assert.Contains("'crew'", error.Message, StringComparison.Ordinal);
        Assert.IsType<FormatException>(error.InnerException);
    }

    [Fact]
    public void Started_threads_are_named_background_threads_that_each_get_their_index()
    {
        var seen = new System.Collections.Concurrent.ConcurrentBag<(int Index, string? Name, bool Background)>();
        var threads = LabThreads.Start(3, i => seen.Add((i, Thread.CurrentThread.Name, Thread.CurrentThread.IsBackground)), "lab-test");
        foreach (var t in threads) t.Join();
        Assert.Equal([(0, "lab-test-0", true), (1, "lab-test-1", true), (2, "lab-test-2", true)], seen.Order());
    }
}
