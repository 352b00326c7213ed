using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Harness;

/// <summary>The thread's CPU clock against the wall clock, and the rule that calls a timed block disturbed.</summary>
public sealed class ThreadDisturbanceTests
{
    private static long Ticks(long nanoseconds) => (long)((double)nanoseconds * LabClock.Frequency / 1_000_000_000);

    [LinuxFact]
    public void A_spin_reads_as_cpu_time_and_the_cpu_clock_never_runs_ahead_of_the_wall_clock()
    {
        Assert.True(ThreadCpuTime.IsAvailable);
        const long SpinNanoseconds = 30_000_000;
        long wallBegan = LabClock.Now;
        long cpuBegan = ThreadCpuTime.NowNanoseconds();
        long spins = 0;
        while (ThreadCpuTime.NowNanoseconds() - cpuBegan < SpinNanoseconds) spins++;
        long wall = LabClock.Now - wallBegan;
        Assert.True(spins > 0);
        // The thread ran for 30 ms of its own CPU time, so at least that much wall time passed (plus whatever it lost).
        Assert.True(wall >= Ticks(SpinNanoseconds), $"{LabClock.Milliseconds(wall)} ms of wall time for 30 ms of CPU time");
    }

    [LinuxFact]
    public void A_sleep_is_not_cpu_time_and_its_block_is_disturbed()
    {
        var mark = ThreadDisturbance.Begin();
        long began = LabClock.Now;
        long cpuBegan = ThreadCpuTime.NowNanoseconds();
        Thread.Sleep(100);
        long cpu = ThreadCpuTime.NowNanoseconds() - cpuBegan;
        long wall = LabClock.Now - began;
        var disturbance = ThreadDisturbance.End(mark, wall);
        Assert.InRange(cpu, 0, 50_000_000); // a sleep costs microseconds of CPU, far from its 100 ms
        Assert.True(disturbance.Known && disturbance.Disturbed);
        Assert.True(disturbance.LostTicks >= Ticks(50_000_000), $"{LabClock.Milliseconds(disturbance.LostTicks)} ms lost over a 100 ms sleep");
        Assert.InRange(disturbance.OwnTimeAtLeast(wall), 0, Ticks(50_000_000)); // the sleep was not the thread's own work
    }

    [LinuxFact]
    public void Marking_a_block_allocates_nothing()
    {
        var first = ThreadDisturbance.End(ThreadDisturbance.Begin(), 1); // first use: statics and marshalling stubs
        Assert.True(first.Known);
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < 1_000; i++) _ = ThreadDisturbance.End(ThreadDisturbance.Begin(), 1);
        Assert.Equal(0, GC.GetAllocatedBytesForCurrentThread() - before);
    }

    [Fact]
    public void A_long_block_of_the_thread_s_own_work_is_kept()
    {
        // 20 ms of wall time, all of it CPU time, no switch: a resize's copying, say.
        var end = new ThreadDisturbance.Mark(4, 20_000_000);
        var disturbance = ThreadDisturbance.Judge(new ThreadDisturbance.Mark(4, 0), end, Ticks(20_000_000));
        Assert.Equal(new BlockDisturbance(true, false, 0), disturbance);
        Assert.Equal(Ticks(20_000_000), disturbance.OwnTimeAtLeast(Ticks(20_000_000)));
    }

    [Fact]
    public void A_block_that_lost_more_than_the_margin_or_was_preempted_is_disturbed()
    {
        long margin = ThreadDisturbance.MarginNanoseconds;
        var begin = new ThreadDisturbance.Mark(4, 1_000_000);
        // No switch, but the wall clock ran 3 ms past the CPU clock: the host took the CPU.
        var stolen = ThreadDisturbance.Judge(begin, new ThreadDisturbance.Mark(4, 2_000_000), Ticks(4_000_000));
        Assert.True(stolen.Disturbed);
        Assert.InRange(stolen.LostTicks, Ticks(3_000_000) - 1, Ticks(3_000_000) + 1);
        Assert.Equal(Ticks(4_000_000) - stolen.LostTicks, stolen.OwnTimeAtLeast(Ticks(4_000_000)));
        // Just within the margin: the clocks' own disagreement, not a stall.
        var within = ThreadDisturbance.Judge(begin, new ThreadDisturbance.Mark(4, 2_000_000), Ticks(1_000_000 + margin - 1_000));
        Assert.False(within.Disturbed);
        // Beyond it by a little: disturbed.
        Assert.True(ThreadDisturbance.Judge(begin, new ThreadDisturbance.Mark(4, 2_000_000), Ticks(1_000_000 + margin + 1_000)).Disturbed);
        // Wall time equal to CPU time, but the scheduler switched the thread out: disturbed.
        Assert.True(ThreadDisturbance.Judge(begin, new ThreadDisturbance.Mark(5, 2_000_000), Ticks(1_000_000)).Disturbed);
        // Only the switches known: a switch still tells.
        Assert.True(ThreadDisturbance.Judge(new ThreadDisturbance.Mark(4, -1), new ThreadDisturbance.Mark(5, -1), Ticks(1_000_000)).Disturbed);
        // Neither known: unknown, never disturbed.
        Assert.Equal(BlockDisturbance.Unknown, ThreadDisturbance.Judge(new ThreadDisturbance.Mark(-1, -1), new ThreadDisturbance.Mark(-1, -1), 5));
    }
}
