using Manaloc.Collections;

namespace Manaloc.Tests.Collections;

/// <summary>The concurrent map's and the native cache's reclamation: a reclaimer waits for every read in progress, and only for those.</summary>
public sealed class ReaderGateTests
{
    [Fact]
    public void WaitForReaders_returns_only_after_a_read_in_progress_has_left_the_gate()
    {
        using var entered = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();
        var reader = new Thread(() =>
        {
            var slot = ReaderGate.Enter();
            entered.Set();
            release.Wait();
            ReaderGate.Exit(slot);
        });
        reader.Start();
        entered.Wait();
        using var waited = new ManualResetEventSlim();
        var reclaimer = new Thread(() =>
        {
            ReaderGate.WaitForReaders();
            waited.Set();
        });
        reclaimer.Start();
        // The reader is inside: however long the reclaimer is given, it must not be done (a gate that lost the reader's
        // marker, or a wait that skips it, lets it through, and the memory would be freed under the read).
        Assert.False(waited.Wait(TimeSpan.FromMilliseconds(200)));
        release.Set();
        reader.Join();
        reclaimer.Join();
        Assert.True(waited.IsSet);
    }

    [Fact]
    public void WaitForReaders_does_not_wait_for_reads_that_ended_nor_for_threads_that_never_read()
    {
        var slot = ReaderGate.Enter();
        ReaderGate.Exit(slot);
        var reader = new Thread(() => ReaderGate.Exit(ReaderGate.Enter()));
        reader.Start();
        reader.Join();
        var reclaimer = new Thread(ReaderGate.WaitForReaders);
        reclaimer.Start();
        Assert.True(reclaimer.Join(TimeSpan.FromSeconds(30))); // no read is in progress: it returns (the bound only keeps a broken gate from hanging the run)
    }
}
