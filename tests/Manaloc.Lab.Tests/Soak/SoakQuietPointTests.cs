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
        var until = DateTime.UtcNow.AddSeconds(3);
        while (DateTime.UtcNow < until)
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
        Assert.True(pauses > 10, $"only {pauses} pauses");
        Assert.True(run.Counters.EventHandOffs > 0 && run.Counters.RecordsCreated > 0);
    }
}
