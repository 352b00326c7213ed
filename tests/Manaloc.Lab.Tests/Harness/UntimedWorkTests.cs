using System.Runtime;
using Manaloc.Lab.Experiments;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Harness;

/// <summary>Process-wide: the work makes the process's collections blocking for its life.</summary>
[Collection(ProcessWideCollection.Name)]
public sealed class UntimedWorkTests
{
    /// <summary>One item that counts its checkpoints until told to stop: what it counted shows when it ran.</summary>
    private sealed class Counter
    {
        public long Checkpoints;
        public volatile bool Stop;

        public void Item(int index, Action checkpoint)
        {
            while (!Stop)
            {
                checkpoint();
                Interlocked.Increment(ref Checkpoints);
                Thread.SpinWait(100);
            }
        }
    }

    [Fact]
    public void Nothing_runs_before_it_is_opened_or_once_it_is_closed()
    {
        var counter = new Counter();
        using var work = new UntimedWork(1, counter.Item, threads: 1);
        work.Close(); // never opened: returns at once
        Thread.Sleep(20);
        Assert.Equal(0, Interlocked.Read(ref counter.Checkpoints));
        work.Open();
        SpinWait.SpinUntil(() => Interlocked.Read(ref counter.Checkpoints) > 100, TimeSpan.FromSeconds(10));
        work.Close();
        // Closed: the item is parked at its checkpoint, so its count stays where it is.
        long parked = Interlocked.Read(ref counter.Checkpoints);
        Assert.True(parked > 100);
        Thread.Sleep(50);
        Assert.Equal(parked, Interlocked.Read(ref counter.Checkpoints));
        work.Open();
        SpinWait.SpinUntil(() => Interlocked.Read(ref counter.Checkpoints) > parked, TimeSpan.FromSeconds(10));
        Assert.True(Interlocked.Read(ref counter.Checkpoints) > parked); // it goes on from where it parked
        counter.Stop = true;
        work.Finish();
        Assert.Equal(1, work.Done);
    }

    [Fact]
    public void Finish_runs_every_item_once_on_every_thread_and_rethrows_a_failure()
    {
        var ran = new int[50];
        using (var work = new UntimedWork(ran.Length, (i, checkpoint) => { checkpoint(); Interlocked.Increment(ref ran[i]); }, threads: 3))
        {
            work.Finish();
            Assert.Equal(ran.Length, work.Done);
        }
        Assert.All(ran, count => Assert.Equal(1, count));

        using var failing = new UntimedWork(4, (i, _) => { if (i == 2) throw new InvalidOperationException("item 2"); }, threads: 2);
        var e = Assert.Throws<AggregateException>(failing.Finish);
        Assert.Equal("item 2", Assert.IsType<InvalidOperationException>(e.InnerException).Message);
    }

    [Fact]
    public void Its_collections_are_blocking_for_its_life_and_the_mode_comes_back()
    {
        var before = GCSettings.LatencyMode;
        // A no-GC region of a test running side by side refuses the change while it lasts (and no collection starts in it).
        using (new UntimedWork(0, (_, _) => { }, threads: 1)) Assert.Contains(GCSettings.LatencyMode, new[] { GCLatencyMode.Batch, GCLatencyMode.NoGCRegion });
        Assert.Equal(before, GCSettings.LatencyMode);
    }

    [Fact]
    public void Outside_a_child_that_announces_its_windows_an_untimed_window_just_runs()
    {
        var context = new ExperimentContext("native-cache", RunSettings.Smoke());
        int ran = 0;
        context.Untimed(() => context.Untimed(() => ran++));
        Assert.Equal(1, ran);
    }

    [Fact]
    public void A_child_s_untimed_windows_run_the_parent_s_work_which_is_parked_once_the_child_is_done()
    {
        var counter = new Counter();
        using var work = new UntimedWork(1, counter.Item, threads: 1);
        var output = ChildProcess.Run(NativeCacheChild(), null, TimeSpan.FromMinutes(2), untimedWork: work);
        Assert.Contains(output.Measurements, m => m.Parameters.Is("op", "full-gc"));
        Assert.Contains(output.Measurements, m => m.Parameters.Is("op", "mix"));
        long ran = Interlocked.Read(ref counter.Checkpoints);
        Assert.True(ran > 0, "the parent's work never ran in the child's windows");
        Thread.Sleep(50);
        Assert.Equal(ran, Interlocked.Read(ref counter.Checkpoints)); // closed with the child
        counter.Stop = true;
        work.Finish();
    }

    [Fact]
    public void A_child_without_untimed_work_does_not_inherit_the_parent_s_windows()
    {
        // A process that is itself such a child starts its own children without the variable unless it gives them work:
        // one that inherited it would announce its windows and find its input closed, with no one to answer it.
        Environment.SetEnvironmentVariable(ChildProcess.UntimedWindowsVariable, "1");
        try
        {
            var output = ChildProcess.Run(NativeCacheChild(), null, TimeSpan.FromMinutes(2));
            Assert.Contains(output.Measurements, m => m.Parameters.Is("op", "full-gc"));
        }
        finally
        {
            Environment.SetEnvironmentVariable(ChildProcess.UntimedWindowsVariable, null);
        }
    }

    /// <summary>A smoke run of NativeCache's child, which announces its fill, its settling collection and its keys' set-up as untimed windows.</summary>
    private static string[] NativeCacheChild()
    {
        var plan = new NativeCachePlan(CacheSubjects.Native, 2_000, NativeCacheProbe.OverflowBudget(RunSettings.Smoke()));
        return ["child", "native-cache", "run", "--mode", "smoke", "--", .. plan.ToArguments()];
    }
}
