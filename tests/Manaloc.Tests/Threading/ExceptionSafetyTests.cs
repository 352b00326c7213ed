using System.Diagnostics;
using Manaloc.Threading;

namespace Manaloc.Tests.Threading;

/// <summary>
/// An exception out of a blocked wait (an interrupt, a disposed token) must leave the event and the
/// lock as if the waiter had never come; and a Set racing a timeout must never leak into a later Wait.
/// </summary>
public sealed class ExceptionSafetyTests
{
    [Fact]
    public void An_interrupted_waiter_leaves_the_event_unset_and_usable()
    {
        using var e = new EconomicResetEvent(spinCount: 0);
        Exception? caught = null;
        var waiter = new Thread(() => { try { e.Wait(); } catch (Exception x) { caught = x; } }) { IsBackground = true };
        waiter.Start();
        EventTestSupport.WaitUntil(() => e.HasBlockedWaiter && (waiter.ThreadState & System.Threading.ThreadState.WaitSleepJoin) != 0, "the waiter blocking");
        waiter.Interrupt();
        Assert.True(waiter.Join(EventTestSupport.Stall));

        Assert.IsType<ThreadInterruptedException>(caught);
        Assert.False(e.HasBlockedWaiter);
        Assert.False(e.Wait(0)); // usable, and not signalled
        e.Set();
        Assert.True(e.Wait(0));
        Assert.False(e.Wait(20)); // no stale signal left in the park
        Assert.False(e.HasBlockedWaiter);
    }

    [Fact]
    public void A_disposed_token_fails_the_wait_without_leaving_it_registered()
    {
        using var e = new EconomicResetEvent(spinCount: 0);
        var cts = new CancellationTokenSource();
        var token = cts.Token;
        cts.Dispose();
        Assert.IsType<ObjectDisposedException>(Record.Exception(() => e.Wait(50, token)));
        Assert.False(e.HasBlockedWaiter);
        Assert.False(e.Wait(10));
        e.Set();
        Assert.True(e.Wait(0));
    }

    [Fact]
    public void A_set_racing_a_timeout_is_delivered_once_and_never_early()
    {
        // Each round the setter sets around the waiter's 1 ms timeout. Whether the wait times out or
        // not, the round's one Set must be consumed exactly once (by the wait or by the Wait(0) after
        // it), and a wait must never return true before its round's Set was issued.
        using var e = new EconomicResetEvent(spinCount: 0);
        const int Rounds = 2000;
        int setIssued = -1;
        long early = 0, delivered = 0;
        using var start = new Barrier(2);
        using var end = new Barrier(2);
        var setter = new Thread(() =>
        {
            var random = new Random(5);
            for (int r = 0; r < Rounds; r++)
            {
                start.SignalAndWait();
                var spin = Stopwatch.StartNew();
                double target = 0.7 + random.NextDouble() * 0.8;
                while (spin.Elapsed.TotalMilliseconds < target) { }
                Volatile.Write(ref setIssued, r);
                e.Set();
                end.SignalAndWait();
            }
        }) { IsBackground = true };
        setter.Start();
        for (int r = 0; r < Rounds; r++)
        {
            start.SignalAndWait();
            if (e.Wait(1))
            {
                delivered++;
                if (Volatile.Read(ref setIssued) != r) early++;
            }
            end.SignalAndWait();
            if (e.Wait(0)) delivered++;
        }
        Assert.True(setter.Join(EventTestSupport.Stall));
        Assert.Equal(0, early);
        Assert.Equal(Rounds, delivered);
        Assert.False(e.HasBlockedWaiter);
    }

    [Fact]
    public void A_release_by_a_thread_with_a_pending_interrupt_still_wakes_the_sleepers()
    {
        var rw = new SlimReaderWriterLock(spinCount: 0);
        rw.EnterWriteLock();
        bool readerIn = false;
        var reader = new Thread(() => { rw.EnterReadLock(); Volatile.Write(ref readerIn, true); rw.ExitReadLock(); }) { IsBackground = true };
        reader.Start();
        EventTestSupport.WaitUntil(() => (reader.ThreadState & System.Threading.ThreadState.WaitSleepJoin) != 0, "the reader sleeping");

        // Another thread holds the monitor the wake needs (in use: a thread inside Sleep or WakeAll), so the
        // release's wake must wait for it, and this thread has an interrupt pending for some other wait.
        using var held = new ManualResetEventSlim();
        var holder = new Thread(() => { lock (rw.SyncForTests) { held.Set(); Thread.Sleep(200); } }) { IsBackground = true };
        holder.Start();
        held.Wait();
        Thread.CurrentThread.Interrupt();
        rw.ExitWriteLock(); // must neither throw nor skip the wake
        // The interrupt was kept for this thread's next wait, not swallowed (consumed here, so the waits below are plain).
        Assert.Throws<ThreadInterruptedException>(() => Thread.Sleep(10));
        Assert.True(holder.Join(EventTestSupport.Stall));
        EventTestSupport.WaitUntil(() => Volatile.Read(ref readerIn), "the reader woken by the release");
        Assert.True(reader.Join(EventTestSupport.Stall));
    }

    [Fact]
    public void A_reader_asleep_behind_a_writer_gets_in_when_that_writer_is_interrupted()
    {
        var rw = new SlimReaderWriterLock(spinCount: 0);
        rw.TurnBiasOffForTests(); // the reader on the state word, so the writer registers as waiting
        rw.EnterReadLock(); // keeps the writer waiting
        var writer = new Thread(() => { try { rw.EnterWriteLock(); rw.ExitWriteLock(); } catch (ThreadInterruptedException) { } }) { IsBackground = true };
        writer.Start();
        EventTestSupport.WaitUntil(() => rw.WaitingWriters == 1 && (writer.ThreadState & System.Threading.ThreadState.WaitSleepJoin) != 0, "the writer sleeping");
        bool readerIn = false;
        var reader = new Thread(() => { rw.EnterReadLock(); Volatile.Write(ref readerIn, true); rw.ExitReadLock(); }) { IsBackground = true };
        reader.Start();
        EventTestSupport.WaitUntil(() => (reader.ThreadState & System.Threading.ThreadState.WaitSleepJoin) != 0, "the reader sleeping behind the writer");
        writer.Interrupt();
        Assert.True(writer.Join(EventTestSupport.Stall));
        EventTestSupport.WaitUntil(() => Volatile.Read(ref readerIn), "the reader behind the departed writer");
        rw.ExitReadLock();
    }

    [Fact]
    public void An_interrupted_waiting_writer_unregisters_so_readers_get_in()
    {
        var rw = new SlimReaderWriterLock(spinCount: 0);
        rw.TurnBiasOffForTests(); // the reader on the state word, so the writer registers as waiting
        rw.EnterReadLock();
        Exception? caught = null;
        var writer = new Thread(() => { try { rw.EnterWriteLock(); } catch (Exception x) { caught = x; } }) { IsBackground = true };
        writer.Start();
        EventTestSupport.WaitUntil(() => rw.WaitingWriters == 1 && (writer.ThreadState & System.Threading.ThreadState.WaitSleepJoin) != 0, "the writer sleeping");
        writer.Interrupt();
        Assert.True(writer.Join(EventTestSupport.Stall));
        Assert.IsType<ThreadInterruptedException>(caught);
        Assert.Equal(0, rw.WaitingWriters);
        rw.ExitReadLock();

        // The lock is free: a reader on another thread gets in without waiting, and so does a writer.
        bool readerGotIn = false;
        var reader = new Thread(() =>
        {
            readerGotIn = rw.TryEnterReadLock();
            if (readerGotIn) rw.ExitReadLock();
        });
        reader.Start();
        Assert.True(reader.Join(EventTestSupport.Stall));
        Assert.True(readerGotIn);
        Assert.True(rw.TryEnterWriteLock());
        rw.ExitWriteLock();
    }

    [Fact]
    public void A_writer_interrupted_while_waiting_for_biased_readers_leaves_them_biased_and_the_lock_usable()
    {
        var rw = new SlimReaderWriterLock(spinCount: 0);
        Assert.True(rw.IsReadBiased);
        rw.EnterReadLock(); // biased: the writer holds the state word at once, revokes, and sleeps on the slots
        Exception? caught = null;
        var writer = new Thread(() => { try { rw.EnterWriteLock(); } catch (Exception x) { caught = x; } }) { IsBackground = true };
        writer.Start();
        EventTestSupport.WaitUntil(() => !rw.IsReadBiased && (writer.ThreadState & System.Threading.ThreadState.WaitSleepJoin) != 0, "the writer waiting for the biased reader");
        writer.Interrupt();
        Assert.True(writer.Join(EventTestSupport.Stall));
        Assert.IsType<ThreadInterruptedException>(caught);

        // As if the writer had never come: the bias is back (the reader inside still holds its slot), the state word is free.
        Assert.True(rw.IsReadBiased);
        Assert.Equal(0, rw.Revocations);
        Assert.Equal(0, rw.WaitingWriters);
        Assert.Equal(1, rw.CurrentReadCount);
        bool otherWrote = true, otherRead = false;
        var other = new Thread(() =>
        {
            otherWrote = rw.TryEnterWriteLock(); // must still see the biased reader
            otherRead = rw.TryEnterReadLock();
            if (otherRead) rw.ExitReadLock();
        });
        other.Start();
        Assert.True(other.Join(EventTestSupport.Stall));
        Assert.False(otherWrote);
        Assert.True(otherRead);
        rw.ExitReadLock();
        Assert.True(rw.TryEnterWriteLock());
        rw.ExitWriteLock();
        Assert.Equal(1, rw.Revocations);
    }
}
