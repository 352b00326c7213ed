using Manaloc.Lab.Soak;

namespace Manaloc.Lab.Tests.Soak;

/// <summary>The whole soak under back-to-back pauses: every pause completes, and the run ends with no violation.</summary>
public sealed class SoakQuietPointTests
{
    [Fact]
    public void Back_to_back_pauses_all_complete_while_the_soak_runs()
    {
        // A pause must never wait for a thread that waits for a parked one. The event ping-pong once parked at the quiet
        // point right after passing its signal; a side preempted between its Set and its check was overtaken by the
        // partner (woken, passed the signal back, went on to wait), parked holding the signal, and the pause then waited
        // 30 s for the partner. Many short pauses in a row give that window many chances.
        using var run = new SoakRun(loadThreads: 2);
        run.Start();
        var random = new Random(7);
        int pauses = 0;
        // At least 3 s and at least MinPauses pauses, however slow the machine (a loaded CI host managed only 10 in 3 s);
        // the 60 s cap only keeps a broken build from running on.
        const int MinPauses = 20;
        var start = DateTime.UtcNow;
        while ((DateTime.UtcNow - start < TimeSpan.FromSeconds(3) || pauses < MinPauses) && DateTime.UtcNow - start < TimeSpan.FromSeconds(60))
        {
            bool paused = run.Quiet.Pause(TimeSpan.FromSeconds(10));
            var (parked, participants) = run.Quiet.Snapshot();
            run.Quiet.Resume();
            Assert.True(paused, $"pause {pauses + 1} did not complete: {parked} of {participants} parked; {string.Join("; ", run.Violations)}");
            pauses++;
            Thread.SpinWait(random.Next(1, 20_000));
        }
        run.StopAndCheck();
        Assert.Empty(run.Violations);
        Assert.True(pauses >= MinPauses, $"only {pauses} pauses in 60 s");
        Assert.True(run.Counters.EventHandOffs > 0 && run.Counters.RecordsCreated > 0);
    }
}
