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
    public void Bad_spin_count_is_rejected()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new SlimReaderWriterLock(-1));
        Assert.Throws<ArgumentOutOfRangeException>(() => new SlimReaderWriterLock(5000));
    }

    [Fact]
    public void A_writer_gets_in_while_readers_keep_overlapping()
    {
        var rw = new SlimReaderWriterLock(spinCount: 0);
        bool stop = false;
        long reads = 0;
        var errors = new List<Exception>();
        var readers = Enumerable.Range(0, 3).Select(i => EventTestSupport.Start(() =>
        {
            while (!Volatile.Read(ref stop))
            {
                rw.EnterReadLock();
                Thread.SpinWait(200); // long enough that readers overlap continuously
                Interlocked.Increment(ref reads);
                rw.ExitReadLock();
            }
        }, errors, $"reader {i}")).ToList();
        EventTestSupport.WaitUntil(() => Volatile.Read(ref reads) > 1000, "readers running");

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
        Volatile.Write(ref stop, true);
        foreach (var r in readers) r.Join();

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
