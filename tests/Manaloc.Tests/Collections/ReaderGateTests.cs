using Manaloc.Collections;

namespace Manaloc.Tests.Collections;

/// <summary>The concurrent map's and the native cache's reclamation: a reclaimer waits for every read in progress, and only for those.</summary>
public sealed class ReaderGateTests
{
    [Fact]
    public void WaitForReaders_returns_only_after_a_read_in_progress_has_left_the_gate()
        // The reader is inside: a gate that lost the reader's marker, or a wait that skips it, lets the reclaimer through,
        // and the memory would be freed under the read.
        => AssertReclaimerWaitsForReader(() =>
        {
            var slot = ReaderGate.Enter();
            return () => ReaderGate.Exit(slot);
        });

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void A_read_nested_inside_another_does_not_end_the_outer_one(bool innerHasLeft)
        // The outer read is still inside, whether or not the inner one has left: a slot the inner enter or exit made even
        // would let the reclaimer through, and it would free what the outer read still holds.
        => AssertReclaimerWaitsForReader(() =>
        {
            var outer = ReaderGate.Enter();
            // User code inside a read (a TimeProvider, a key's Equals) that reads a map or cache itself.
            var inner = ReaderGate.Enter();
            if (innerHasLeft) ReaderGate.Exit(inner);
            return () =>
            {
                if (!innerHasLeft) ReaderGate.Exit(inner);
                ReaderGate.Exit(outer);
            };
        });

    /// <summary>On a reader thread, <paramref name="enter"/> enters a read and returns how to leave it; while the reader
    /// is inside, a reclaimer's <see cref="ReaderGate.WaitForReaders"/> must not return, however long it is given, and
    /// once the reader has left it must.</summary>
    private static void AssertReclaimerWaitsForReader(Func<Action> enter)
    {
        using var entered = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();
        var reader = new Thread(() =>
        {
            var leave = enter();
            entered.Set();
            release.Wait();
            leave();
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

    [Fact]
    public void Enter_marks_the_slot_odd_and_Exit_leaves_it_even_one_further()
    {
        var slot = ReaderGate.Enter();
        long entered = Volatile.Read(ref slot.Sequence.Value);
        Assert.Equal(1, entered & 1);
        ReaderGate.Exit(slot);
        Assert.Equal(entered + 1, Volatile.Read(ref slot.Sequence.Value));
        var again = ReaderGate.Enter();
        Assert.Same(slot, again); // one slot per thread
        Assert.Equal(entered + 2, Volatile.Read(ref again.Sequence.Value));
        ReaderGate.Exit(again);
    }

    [Fact]
    public void Every_read_in_progress_is_waited_for_while_threads_register_read_and_exit_for_good()
    {
        // Many readers inside at once, all registered just now: the reclaimer returns only after the last has left.
        const int inside = 40;
        using var allInside = new CountdownEvent(inside);
        using var release = new ManualResetEventSlim();
        int left = 0;
        var readers = new Thread[inside];
        for (int i = 0; i < inside; i++)
        {
            readers[i] = new Thread(() =>
            {
                var pass = ReaderGate.Enter();
                allInside.Signal();
                release.Wait();
                Interlocked.Increment(ref left);
                ReaderGate.Exit(pass);
            });
            readers[i].Start();
        }
        allInside.Wait();
        using var waited = new ManualResetEventSlim();
        int leftWhenDone = -1;
        var reclaimer = new Thread(() =>
        {
            ReaderGate.WaitForReaders();
            leftWhenDone = Volatile.Read(ref left);
            waited.Set();
        });
        reclaimer.Start();
        Assert.False(waited.Wait(TimeSpan.FromMilliseconds(200)));
        release.Set();
        foreach (var reader in readers) reader.Join();
        Assert.True(reclaimer.Join(TimeSpan.FromSeconds(30)));
        Assert.Equal(inside, leftWhenDone); // it returned only after the last reader had left

        // Churn: short-lived threads register, read and exit for good while a reclaimer keeps unpublishing what they read
        // and "freeing" it once it has waited. A reader that finds its object freed before it left the gate was not waited
        // for (a registration the reclaimer's scan missed, a slot dropped while its thread was inside, a wait cut short).
        var current = new Box();
        int violations = 0;
        bool stop = false;
        long reclaims = 0;
        var churnReclaimer = new Thread(() =>
        {
            while (!Volatile.Read(ref stop))
            {
                var old = Interlocked.Exchange(ref current, new Box());
                ReaderGate.WaitForReaders();
                Volatile.Write(ref old.Freed, true);
                reclaims++;
            }
        });
        churnReclaimer.Start();
        for (int round = 0; round < 40; round++)
        {
            var batch = new Thread[4];
            for (int t = 0; t < batch.Length; t++)
            {
                batch[t] = new Thread(() =>
                {
                    for (int r = 0; r < 200; r++)
                    {
                        var pass = ReaderGate.Enter();
                        var box = Volatile.Read(ref current);
                        Thread.SpinWait(20);
                        if (Volatile.Read(ref box.Freed)) Interlocked.Increment(ref violations);
                        ReaderGate.Exit(pass);
                    }
                });
                batch[t].Start();
            }
            foreach (var t in batch) t.Join();
            if (round % 10 == 9) GC.Collect(); // slots of exited threads become garbage and leave the scan
        }
        Volatile.Write(ref stop, true);
        Assert.True(churnReclaimer.Join(TimeSpan.FromSeconds(30)));
        Assert.True(reclaims > 0);
        Assert.Equal(0, violations);
    }

    private sealed class Box
    {
        public bool Freed;
    }
}
