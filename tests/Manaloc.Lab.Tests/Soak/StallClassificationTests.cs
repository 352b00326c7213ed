using System.Collections.Concurrent;
using System.Diagnostics;
using Manaloc.Lab.Soak;

namespace Manaloc.Lab.Tests.Soak;

/// <summary>
/// The soak tells a stall of the whole process from a hang: a timed wait is excused only when the
/// process ran for less than half of the limit while it waited. A missed wake-up with the process
/// running must stay a violation.
/// </summary>
public sealed class StallClassificationTests
{
    private static readonly long Second = Stopwatch.Frequency;

    /// <summary>A stall source that reports a fixed share of any span as not running.</summary>
    private sealed class FakeStalls(double notRunningShare) : IStallSource
    {
        public TimeSpan NotRunningBetween(long from, long to) => Stopwatch.GetElapsedTime(from, to) * notRunningShare;
    }

    [Theory]
    [InlineData(0.0, false)]   // ran the whole time: a hang
    [InlineData(0.4, false)]   // 30 s waited, ran 18 s: more than half the limit, still a hang
    [InlineData(0.6, true)]    // ran 12 s of 30: the partner barely had a chance
    [InlineData(1.0, true)]    // never ran
    public void A_timed_out_wait_is_a_stall_only_when_the_process_ran_under_half_the_limit(double notRunningShare, bool excused)
    {
        var watch = new HangWatch(new FakeStalls(notRunningShare), TimeSpan.FromSeconds(30));
        long start = 1_000 * Second;
        Assert.Equal(excused, watch.ExcusedByStall(start, start + 30 * Second, "test wait"));
        Assert.Equal(excused ? 1 : 0, watch.Count);
        if (excused) Assert.Equal(30 * notRunningShare, watch.FirstStalls.Single().NotRunning.TotalSeconds, precision: 3);
    }

    [Fact]
    public void A_stall_that_ended_long_before_the_wait_excuses_nothing()
    {
        var heartbeat = new Heartbeat();
        long t = Stopwatch.GetTimestamp(); // the heartbeat's first tick is due from its creation, so the test's clock starts there
        heartbeat.Tick(t);
        heartbeat.Tick(t + 40 * Second); // a 40 s gap
        for (long ms = 10; ms <= 70_000; ms += 10) heartbeat.Tick(t + 40 * Second + ms * Second / 1000);
        var watch = new HangWatch(heartbeat, TimeSpan.FromSeconds(30));
        long waitStart = t + 80 * Second;
        Assert.False(watch.ExcusedByStall(waitStart, waitStart + 30 * Second, "after the stall"));
        Assert.True(watch.ExcusedByStall(t + 5 * Second, t + 45 * Second, "across the stall"));
        Assert.Equal(1, heartbeat.Gaps);
    }

    [Fact]
    public void The_heartbeat_records_late_ticks_as_gaps_and_counts_a_gap_still_open()
    {
        var heartbeat = new Heartbeat();
        long t = Stopwatch.GetTimestamp(), ms = Second / 1000;
        heartbeat.Tick(t);
        heartbeat.Tick(t + 60 * ms);   // 50 ms late: ordinary scheduling delay, not a gap
        heartbeat.Tick(t + 2060 * ms); // 2 s late: a gap from the due tick (t + 70 ms) to now
        Assert.Equal(1, heartbeat.Gaps);
        Assert.Equal(TimeSpan.FromMilliseconds(1990), heartbeat.LongestGap);
        Assert.Equal(TimeSpan.FromMilliseconds(980), heartbeat.NotRunningBetween(t + 1080 * ms, t + 2060 * ms));
        Assert.Equal(TimeSpan.Zero, heartbeat.NotRunningBetween(t, t + 70 * ms));
        // No tick for 5 s after the last one: asked at that moment (the caller ran before the heartbeat), the open span counts.
        Assert.Equal(TimeSpan.FromMilliseconds(4990), heartbeat.NotRunningBetween(t + 2060 * ms, t + 7060 * ms));
        Assert.Equal(1, heartbeat.Gaps); // asking records nothing
    }

    /// <summary>Ping-pong with a short limit, Pong's loop on its own thread, the test playing Ping by hand.</summary>
    private sealed class Harness : IDisposable
    {
        public readonly ConcurrentQueue<string> Violations = new();
        public readonly HangWatch Hang;
        public readonly EventPingPong PingPong;
        public long HandOffs;
        private readonly Thread _pong;

        public Harness(double notRunningShare)
        {
            Hang = new HangWatch(new FakeStalls(notRunningShare), TimeSpan.FromMilliseconds(200));
            PingPong = new EventPingPong(Hang, new QuietPoint(), Violations.Enqueue, () => Interlocked.Increment(ref HandOffs));
            _pong = new Thread(PingPong.RunPong) { IsBackground = true };
            _pong.Start();
        }

        public bool PongEnded(TimeSpan within) => _pong.Join(within);

        public void Dispose()
        {
            PingPong.Stop();
            _pong.Join();
            PingPong.Dispose();
        }
    }

    [Fact]
    public void A_Set_counted_but_never_delivered_with_the_process_running_is_a_lost_wakeup_violation()
    {
        using var h = new Harness(notRunningShare: 0);
        h.PingPong.Ping.CountSet(); // Ping says it set Pong's event; the event never got it: what a lost wakeup looks like
        Assert.True(h.PongEnded(TimeSpan.FromSeconds(10)), "Pong should give up after its 200 ms limit");
        string violation = Assert.Single(h.Violations);
        Assert.Contains("a Set was due", violation);
        Assert.Contains("lost wakeup", violation);
        Assert.Contains("pong's event is unset", violation);
        Assert.Contains("ping's last step: starting", violation);
        Assert.Equal(0, h.Hang.Count);
    }

    [Fact]
    public void A_partner_that_never_sets_with_the_process_running_is_a_hang_violation()
    {
        using var h = new Harness(notRunningShare: 0);
        Assert.True(h.PongEnded(TimeSpan.FromSeconds(10)));
        string violation = Assert.Single(h.Violations);
        Assert.Contains("no Set was due", violation);
        Assert.Equal(0, h.Hang.Count);
    }

    [Fact]
    public void A_wait_held_up_by_a_stall_is_counted_and_the_waiter_keeps_waiting_for_the_Set()
    {
        using var h = new Harness(notRunningShare: 0.9);
        var until = Stopwatch.StartNew();
        while (h.Hang.Count < 2 && until.Elapsed < TimeSpan.FromSeconds(10)) Thread.Sleep(10);
        Assert.True(h.Hang.Count >= 2, $"two timed-out waits should have been excused, saw {h.Hang.Count}");
        Assert.False(h.PongEnded(TimeSpan.Zero));
        h.PingPong.Ping.Pass(h.PingPong.Pong); // the Set arrives after the stall: Pong wakes and passes it back
        Assert.True(h.PingPong.Ping.Event.Wait(TimeSpan.FromSeconds(10)), "Pong passed the signal back");
        Assert.Equal(1, h.PingPong.Pong.Wakes);
        Assert.Equal(1, Interlocked.Read(ref h.HandOffs));
        Assert.Empty(h.Violations);
        Assert.Equal("event wait (pong)", h.Hang.FirstStalls[0].What);
    }
}
