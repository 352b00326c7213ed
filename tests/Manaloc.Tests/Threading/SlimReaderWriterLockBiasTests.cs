using Manaloc.Threading;

namespace Manaloc.Tests.Threading;

/// <summary>
/// Reader bias: a thread's first read lock goes through its slot while the bias is on; writers
/// revoke it and wait for the slots; it comes back after the inhibit window. No timings are asserted:
/// waits are progress checks with generous bounds.
/// </summary>
public sealed class SlimReaderWriterLockBiasTests
{
    [Fact]
    public void A_new_lock_is_read_biased_and_a_biased_reader_counts_as_inside()
    {
        var rw = new SlimReaderWriterLock();
        Assert.True(rw.IsReadBiased);
        rw.EnterReadLock();
        Assert.True(rw.IsReadLockHeld);
        Assert.Equal(1, rw.CurrentReadCount);
        Assert.False(TryEnterWriteLockOnOtherThread(rw)); // sees the biased reader: fails, and puts the bias back
        Assert.True(rw.IsReadBiased);
        Assert.Equal(1, rw.CurrentReadCount);
        rw.ExitReadLock();
        Assert.False(rw.IsReadLockHeld);
        Assert.Equal(0, rw.CurrentReadCount);
        Assert.Equal(0, rw.Revocations);

        rw.EnterWriteLock(); // revokes: nobody inside, so at once
        Assert.False(rw.IsReadBiased);
        Assert.Equal(1, rw.Revocations);
        rw.ExitWriteLock();
        Assert.False(rw.IsReadBiased); // only a reader turns it back on
    }

    [Fact]
    public void Recursion_through_the_biased_path_throws_and_leaves_the_lock_as_it_was()
    {
        // On a thread of its own: if RevokeBias stopped checking for the caller's own biased read, EnterWriteLock
        // would wait for this thread's slot forever; the join below turns that hang into a failure.
        var errors = new List<Exception>();
        var body = EventTestSupport.Start(Body, errors, "biased reader");
        Assert.True(body.Join(EventTestSupport.Stall), "a recursive write on a biased read hung instead of throwing");
        Assert.Empty(errors);
    }

    private static void Body()
    {
        // A thread's very first read lock creates its record and goes through the state word; take one first.
        var warm = new SlimReaderWriterLock();
        warm.EnterReadLock();
        warm.ExitReadLock();
        var rw = new SlimReaderWriterLock();
        Assert.True(rw.IsReadBiased);
        rw.EnterReadLock(); // biased: the state word does not show it, so the write fast path's CAS succeeds
        Assert.True(rw.IsBiasedReadHeld);
        Assert.Throws<LockRecursionException>(() => rw.EnterReadLock());
        Assert.Throws<LockRecursionException>(() => rw.TryEnterReadLock());
        Assert.Throws<LockRecursionException>(() => rw.EnterWriteLock());
        Assert.Throws<LockRecursionException>(() => rw.TryEnterWriteLock());
        Assert.Throws<LockRecursionException>(() => { using (rw.EnterWriteScope()) { } });
        Assert.True(rw.IsReadBiased); // the failed writes did not revoke
        Assert.Equal(0, rw.Revocations);
        Assert.True(rw.IsReadLockHeld);
        Assert.Equal(1, rw.CurrentReadCount);
        Assert.False(rw.IsWriteLockHeld);
        rw.ExitReadLock();
        Assert.Throws<SynchronizationLockException>(() => rw.ExitReadLock());

        // Nothing left behind: a writer on another thread gets in at once.
        Assert.True(TryEnterWriteLockOnOtherThread(rw, exit: true));
        Assert.Equal(0, rw.CurrentReadCount);
    }

    [Fact]
    public void A_biased_reader_is_caught_re_entering_while_a_writer_waits_for_it()
    {
        var rw = new SlimReaderWriterLock(spinCount: 0);
        rw.EnterReadLock(); // biased
        Assert.True(rw.IsBiasedReadHeld);
        var errors = new List<Exception>();
        bool writerIn = false;
        var writer = EventTestSupport.Start(() => { rw.EnterWriteLock(); Volatile.Write(ref writerIn, true); rw.ExitWriteLock(); }, errors, "writer");
        // The writer holds the state word and has revoked the bias: it is waiting for this thread's slot.
        EventTestSupport.WaitUntil(() => !rw.IsReadBiased && (writer.ThreadState & System.Threading.ThreadState.WaitSleepJoin) != 0, "the writer waiting for the biased reader");
        Assert.Throws<LockRecursionException>(() => rw.EnterReadLock());
        Assert.Throws<LockRecursionException>(() => rw.TryEnterReadLock());
        Assert.Throws<LockRecursionException>(() => rw.EnterWriteLock());
        Assert.Throws<LockRecursionException>(() => rw.TryEnterWriteLock());
        Assert.False(Volatile.Read(ref writerIn));
        rw.ExitReadLock(); // wakes the writer
        Assert.True(writer.Join(EventTestSupport.Stall));
        Assert.Empty(errors);
        Assert.True(writerIn);
        Assert.Equal(1, rw.Revocations);
        Assert.Equal(1, rw.RevocationsThatWaited); // the revocation found this thread's biased read inside and waited for it
    }

    [Fact]
    public void A_writer_gets_in_while_biased_readers_keep_overlapping()
    {
        // Inhibit factor 0: the readers turn the bias back on as soon as they can, so nearly every write revokes it.
        var rw = new SlimReaderWriterLock(spinCount: 0, inhibitFactor: 0);
        var errors = new List<Exception>();
        var readers = new OverlappingReaders(rw, 3, errors);
        Assert.True(rw.IsReadBiased); // no writer yet: the readers are on their slots

        long writes = 0;
        var writer = EventTestSupport.Start(() =>
        {
            for (int i = 0; i < 200; i++)
            {
                rw.EnterWriteLock();
                Interlocked.Increment(ref writes);
                rw.ExitWriteLock();
                // Let the readers turn the bias back on before the next write, so the next one revokes it again.
                long seen = readers.Reads;
                EventTestSupport.WaitUntil(() => readers.Reads > seen + 200, "readers after a write");
            }
        }, errors, "writer");
        EventTestSupport.JoinWithWatchdog([writer], () => Volatile.Read(ref writes), () => $"writer starved after {Volatile.Read(ref writes)} writes, biased {rw.IsReadBiased}");
        readers.Stop();

        Assert.Empty(errors);
        Assert.Equal(200, writes);
        Assert.True(rw.Revocations > 1, $"revocations: {rw.Revocations}");
    }

    [Fact]
    public void The_bias_comes_back_after_the_inhibit_window()
    {
        var rw = new SlimReaderWriterLock();
        for (int round = 0; round < 3; round++)
        {
            rw.EnterWriteLock();
            rw.ExitWriteLock();
            Assert.False(rw.IsReadBiased); // revoked (a writer never turns it back on)

            // Readers on the state word check the clock now and then; once the window has passed, one turns it on.
            long reads = 0;
            EventTestSupport.WaitUntil(() =>
            {
                for (int i = 0; i < 1000; i++)
                {
                    rw.EnterReadLock();
                    rw.ExitReadLock();
                    reads++;
                }
                return rw.IsReadBiased;
            }, $"the bias coming back (round {round}, {reads} reads so far)");
            Assert.Equal(round + 1, rw.Revocations);
        }
        Assert.Equal(0, rw.CurrentReadCount);
    }

    [Fact]
    public void A_read_lock_taken_inside_another_is_not_biased_and_both_release_in_any_order()
    {
        // Only a thread's first read lock can be biased; the second goes through the state word.
        var a = new SlimReaderWriterLock();
        var b = new SlimReaderWriterLock();
        a.EnterReadLock(); // biased
        b.EnterReadLock(); // state word
        Assert.True(a.IsBiasedReadHeld);
        Assert.False(b.IsBiasedReadHeld);
        Assert.True(b.IsReadLockHeld);
        Assert.Equal(1, a.CurrentReadCount);
        Assert.Equal(1, b.CurrentReadCount);
        a.ExitReadLock(); // the biased one first: the record refills its first entry with b
        Assert.True(b.IsReadLockHeld);
        Assert.False(a.IsReadLockHeld);
        Assert.Equal(0, a.CurrentReadCount);
        b.ExitReadLock();
        Assert.Equal(0, b.CurrentReadCount);
        Assert.True(TryEnterWriteLockOnOtherThread(a, exit: true));
        Assert.True(TryEnterWriteLockOnOtherThread(b, exit: true));
    }

    private static bool TryEnterWriteLockOnOtherThread(SlimReaderWriterLock rw, bool exit = false)
    {
        bool entered = false;
        var errors = new List<Exception>();
        EventTestSupport.Start(() =>
        {
            entered = rw.TryEnterWriteLock();
            if (entered && exit) rw.ExitWriteLock();
        }, errors, "other writer").Join();
        Assert.Empty(errors);
        return entered;
    }
}
