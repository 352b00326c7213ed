using Manaloc.Threading;

namespace Manaloc.Tests.Threading;

public sealed class SlimReaderWriterLockTests
{
    [Fact]
    public void Enter_and_exit_track_the_holders()
    {
        var rw = new SlimReaderWriterLock();
        rw.EnterReadLock();
        Assert.True(rw.IsReadLockHeld);
        Assert.Equal(1, rw.CurrentReadCount);
        rw.ExitReadLock();
        Assert.False(rw.IsReadLockHeld);

        rw.EnterWriteLock();
        Assert.True(rw.IsWriteLockHeld);
        Assert.False(rw.TryEnterReadLockOnOtherThread());
        rw.ExitWriteLock();
        Assert.False(rw.IsWriteLockHeld);
        Assert.Equal(0, rw.CurrentReadCount);

        using (rw.EnterReadScope()) Assert.True(rw.IsReadLockHeld);
        using (rw.EnterWriteScope()) Assert.True(rw.IsWriteLockHeld);
        Assert.False(rw.IsReadLockHeld || rw.IsWriteLockHeld);
    }

    [Fact]
    public void Readers_share_and_a_writer_excludes()
    {
        var rw = new SlimReaderWriterLock();
        rw.EnterReadLock();
        var errors = new List<Exception>();
        bool otherRead = false, otherWrite = true;
        var t = EventTestSupport.Start(() =>
        {
            otherRead = rw.TryEnterReadLock();
            if (otherRead) rw.ExitReadLock();
            otherWrite = rw.TryEnterWriteLock();
        }, errors, "other");
        t.Join();
        rw.ExitReadLock();

        Assert.Empty(errors);
        Assert.True(otherRead);
        Assert.False(otherWrite);
        Assert.True(rw.TryEnterWriteLock());
        rw.ExitWriteLock();
    }

    [Fact]
    public void Recursive_use_throws_LockRecursionException()
    {
        var rw = new SlimReaderWriterLock();
        rw.EnterReadLock();
        Assert.Throws<LockRecursionException>(() => rw.EnterReadLock());
        Assert.Throws<LockRecursionException>(() => rw.EnterWriteLock()); // no upgrades
        Assert.Throws<LockRecursionException>(() => rw.TryEnterReadLock());
        rw.ExitReadLock();

        rw.EnterWriteLock();
        Assert.Throws<LockRecursionException>(() => rw.EnterWriteLock());
        Assert.Throws<LockRecursionException>(() => rw.EnterReadLock());
        Assert.Throws<LockRecursionException>(() => rw.TryEnterWriteLock());
        rw.ExitWriteLock();

        // The failed attempts left nothing behind.
        Assert.Equal(0, rw.CurrentReadCount);
        Assert.True(rw.TryEnterWriteLock());
        rw.ExitWriteLock();
    }

    [Fact]
    public void Releasing_a_lock_not_held_throws_SynchronizationLockException()
    {
        var rw = new SlimReaderWriterLock();
        Assert.Throws<SynchronizationLockException>(() => rw.ExitReadLock());
        Assert.Throws<SynchronizationLockException>(() => rw.ExitWriteLock());

        rw.EnterWriteLock();
        var errors = new List<Exception>();
        EventTestSupport.Start(() => rw.ExitWriteLock(), errors, "stranger").Join();
        Assert.IsType<SynchronizationLockException>(Assert.Single(errors));
        rw.ExitWriteLock();
    }

    [Fact]
    public void Nested_read_locks_on_different_locks_are_fine_in_any_exit_order()
    {
        var locks = Enumerable.Range(0, 6).Select(_ => new SlimReaderWriterLock()).ToArray();
        foreach (var l in locks) l.EnterReadLock();
        Assert.All(locks, l => Assert.True(l.IsReadLockHeld));
        foreach (var l in new[] { locks[2], locks[0], locks[5], locks[1], locks[4], locks[3] }) l.ExitReadLock();
        Assert.All(locks, l => Assert.False(l.IsReadLockHeld));
        Assert.All(locks, l => Assert.Equal(0, l.CurrentReadCount));
    }

    [Fact]
    public void Recursion_is_caught_while_other_read_locks_are_held()
    {
        // The fast paths check only "holds no read lock at all"; with others held, the record's list decides.
        var a = new SlimReaderWriterLock();
        var b = new SlimReaderWriterLock();
        var c = new SlimReaderWriterLock();
        a.EnterReadLock();
        b.EnterReadLock();
        Assert.Throws<LockRecursionException>(() => a.EnterReadLock());
        Assert.Throws<LockRecursionException>(() => b.EnterReadLock());
        Assert.Throws<LockRecursionException>(() => a.EnterWriteLock());
        Assert.Throws<LockRecursionException>(() => a.TryEnterWriteLock());

        c.EnterWriteLock();
        Assert.Throws<LockRecursionException>(() => c.EnterReadLock()); // read in write, with read locks held elsewhere
        Assert.Throws<LockRecursionException>(() => c.TryEnterReadLock());
        Assert.Throws<LockRecursionException>(() => c.EnterWriteLock());
        c.ExitWriteLock();

        a.ExitReadLock(); // out of order: b, the innermost, is still held
        Assert.True(b.IsReadLockHeld);
        Assert.Throws<LockRecursionException>(() => b.EnterReadLock());
        Assert.Throws<SynchronizationLockException>(() => a.ExitReadLock());
        b.ExitReadLock();
        Assert.All(new[] { a, b, c }, l => Assert.Equal(0, l.CurrentReadCount));
        Assert.All(new[] { a, b, c }, l => Assert.Equal(0, l.WaitingWriters));
    }

    [Fact]
    public void Releasing_another_threads_read_lock_throws_and_leaves_it_held()
    {
        var rw = new SlimReaderWriterLock();
        var other = new SlimReaderWriterLock();
        rw.EnterReadLock();
        var errors = new List<Exception>();
        bool otherSawHeld = true;
        EventTestSupport.Start(() =>
        {
            otherSawHeld = rw.IsReadLockHeld;
            other.EnterReadLock(); // this thread holds some read lock, just not rw
            try { rw.ExitReadLock(); }
            finally { other.ExitReadLock(); }
        }, errors, "stranger").Join();

        Assert.False(otherSawHeld);
        Assert.IsType<SynchronizationLockException>(Assert.Single(errors));
        Assert.True(rw.IsReadLockHeld);
        Assert.Equal(1, rw.CurrentReadCount);
        rw.ExitReadLock();
        Assert.Equal(0, rw.CurrentReadCount);
    }

    [Fact]
    public void A_thread_may_hold_many_read_locks()
    {
        var locks = Enumerable.Range(0, 20).Select(_ => new SlimReaderWriterLock()).ToArray();
        foreach (var l in locks) l.EnterReadLock();
        Assert.All(locks, l => Assert.Throws<LockRecursionException>(() => l.EnterReadLock()));
        for (int i = 0; i < locks.Length; i += 2) locks[i].ExitReadLock(); // every other one, oldest first
        for (int i = 0; i < locks.Length; i++) Assert.Equal(i % 2 == 1, locks[i].IsReadLockHeld);
        for (int i = locks.Length - 1; i >= 1; i -= 2) locks[i].ExitReadLock();
        Assert.All(locks, l => Assert.Equal(0, l.CurrentReadCount));
        Assert.All(locks, l => Assert.True(l.TryEnterWriteLock()));
        Assert.All(locks, l => l.ExitWriteLock());
    }

    [Fact]
    public void Enter_and_exit_allocate_nothing_after_first_use()
    {
        var rw = new SlimReaderWriterLock();
        var second = new SlimReaderWriterLock();
        void Round()
        {
            for (int i = 0; i < 1000; i++)
            {
                rw.EnterReadLock();
                rw.ExitReadLock();
                rw.EnterWriteLock();
                rw.ExitWriteLock();
                second.EnterReadLock();
                rw.EnterReadLock(); // nested: the record's list, within the room it already has
                rw.ExitReadLock();
                second.ExitReadLock();
                using (rw.EnterReadScope()) { }
            }
        }
        Round(); // first use: the thread's record and its list are created
        Assert.Equal(0, Allocations.OnThisThread(Round));
    }

    [Fact]
    public void Bad_spin_count_is_rejected()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new SlimReaderWriterLock(-1));
        Assert.Throws<ArgumentOutOfRangeException>(() => new SlimReaderWriterLock(5000));
    }

    [Fact]
    public void A_writer_gets_in_while_readers_keep_overlapping()
    {
        var rw = new SlimReaderWriterLock(spinCount: 0);
        var errors = new List<Exception>();
        var readers = new OverlappingReaders(rw, 3, errors);

        long writes = 0;
        var writer = EventTestSupport.Start(() =>
        {
            for (int i = 0; i < 200; i++)
            {
                rw.EnterWriteLock();
                Interlocked.Increment(ref writes);
                rw.ExitWriteLock();
            }
        }, errors, "writer");
        EventTestSupport.JoinWithWatchdog([writer], () => Volatile.Read(ref writes), () => $"writer starved after {Volatile.Read(ref writes)} writes");
        readers.Stop();

        Assert.Empty(errors);
        Assert.Equal(200, writes);
    }
}

internal static class SlimReaderWriterLockTestExtensions
{
    public static bool TryEnterReadLockOnOtherThread(this SlimReaderWriterLock rw)
    {
        bool entered = false;
        var t = new Thread(() =>
        {
            entered = rw.TryEnterReadLock();
            if (entered) rw.ExitReadLock();
        });
        t.Start();
        t.Join();
        return entered;
    }
}
