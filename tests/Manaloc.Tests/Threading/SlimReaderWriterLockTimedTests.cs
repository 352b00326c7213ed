using Manaloc.Threading;
using Microsoft.Extensions.Time.Testing;

namespace Manaloc.Tests.Threading;

/// <summary>Timed and cancellable acquisition: gives up on time, never early, and leaves nothing behind.</summary>
public sealed class SlimReaderWriterLockTimedTests
{
    /// <summary>A timeout on the fake clock: a minute, so a wait measured on the real clock could not end within a test.</summary>
    private static readonly TimeSpan OneMinute = TimeSpan.FromMinutes(1);

    [Fact]
    public void A_write_attempt_times_out_behind_a_biased_reader_on_the_locks_clock_and_restores_the_bias()
    {
        var clock = new FakeTimeProvider();
        var rw = new SlimReaderWriterLock(timeProvider: clock);
        using var reader = new HeldLock(rw, write: false, biased: true);
        Assert.False(GivesUpOnTheClock(clock, OneMinute, () => rw.TryEnterWriteLock(OneMinute) || rw.IsWriteLockHeld));
        Assert.True(rw.IsReadBiased, "the bias stays on for the readers inside");
        Assert.Equal(1, rw.CurrentReadCount);
        reader.Release();
        Assert.True(rw.TryEnterWriteLock(OneMinute));
        rw.ExitWriteLock();
    }

    [Fact]
    public void A_write_attempt_times_out_behind_a_state_word_reader_on_the_locks_clock_and_stops_holding_readers_back()
    {
        var clock = new FakeTimeProvider();
        var rw = new SlimReaderWriterLock(timeProvider: clock);
        rw.TurnBiasOffForTests();
        using var reader = new HeldLock(rw, write: false, biased: false);
        Assert.False(GivesUpOnTheClock(clock, OneMinute, () => rw.TryEnterWriteLock((int)OneMinute.TotalMilliseconds)));
        Assert.Equal(0, rw.WaitingWriters);
        Assert.True(rw.TryEnterReadLock(), "a reader is still held back by the writer that gave up");
        rw.ExitReadLock();
        reader.Release();
    }

    [Fact]
    public void A_read_attempt_times_out_behind_a_writer_on_the_locks_clock()
    {
        var clock = new FakeTimeProvider();
        var rw = new SlimReaderWriterLock(timeProvider: clock);
        using var writer = new HeldLock(rw, write: true, biased: false);
        Assert.False(GivesUpOnTheClock(clock, OneMinute, () => rw.TryEnterReadLock(OneMinute) || rw.IsReadLockHeld));
        writer.Release();
        Assert.Equal(0, rw.CurrentReadCount);
        Assert.True(rw.TryEnterReadLock(OneMinute));
        rw.ExitReadLock();
    }

    /// <summary>
    /// Runs <paramref name="attempt"/> on a thread of its own, checks it still waits once the fake clock is a second
    /// short of <paramref name="timeout"/> (a wait that ran on another clock, or gave up early, fails here or never ends),
    /// then moves the clock past the timeout until the attempt returns, and returns its result.
    /// </summary>
    private static bool GivesUpOnTheClock(FakeTimeProvider clock, TimeSpan timeout, Func<bool> attempt)
    {
        var task = Task.Factory.StartNew(attempt, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
        clock.Advance(timeout - TimeSpan.FromSeconds(1));
        Assert.False(task.Wait(TimeSpan.FromMilliseconds(200)), "gave up before the lock's clock reached the timeout");
        // The attempt may have started after the first advance (its timeout then runs from there): advance until it returns.
        for (int i = 0; i < 5 && !task.IsCompleted; i++)
        {
            clock.Advance(timeout);
            task.Wait(TimeSpan.FromSeconds(5));
        }
        Assert.True(task.IsCompleted, "still waiting after the lock's clock passed the timeout");
        return task.Result;
    }

    [Fact]
    public void Cancellation_stops_a_waiting_writer_and_a_waiting_reader()
    {
        var rw = new SlimReaderWriterLock(spinCount: 0);
        using (var reader = new HeldLock(rw, write: false, biased: true))
        {
            ExpectCancelled(token => rw.TryEnterWriteLock(Timeout.InfiniteTimeSpan, token));
            Assert.Equal(0, rw.WaitingWriters);
        }
        using (var writer = new HeldLock(rw, write: true, biased: false))
        {
            ExpectCancelled(token => rw.TryEnterReadLock(Timeout.Infinite, token));
        }
        rw.EnterWriteLock(); // nothing was left held
        rw.ExitWriteLock();
    }

    private static void ExpectCancelled(Func<CancellationToken, bool> attempt)
    {
        using var cts = new CancellationTokenSource();
        var errors = new List<Exception>();
        var waiter = EventTestSupport.Start(() => attempt(cts.Token), errors, "waiter");
        Thread.Sleep(20); // let it reach its wait (if it has not, cancellation stops it just the same)
        cts.Cancel();
        Assert.True(waiter.Join(EventTestSupport.Stall), "a cancelled acquisition kept waiting");
        var e = Assert.Single(errors);
        Assert.Equal(cts.Token, Assert.IsAssignableFrom<OperationCanceledException>(e).CancellationToken);
    }

    [Fact]
    public void An_already_cancelled_token_throws_even_on_a_free_lock_and_takes_nothing()
    {
        var rw = new SlimReaderWriterLock();
        var cancelled = new CancellationToken(canceled: true);
        Assert.Throws<OperationCanceledException>(() => rw.TryEnterReadLock(TimeSpan.FromSeconds(1), cancelled));
        Assert.Throws<OperationCanceledException>(() => rw.TryEnterWriteLock(0, cancelled));
        Assert.False(rw.IsReadLockHeld);
        Assert.False(rw.IsWriteLockHeld);
        Assert.Equal(0, rw.CurrentReadCount);
    }

    [Fact]
    public void A_timed_attempt_succeeds_once_the_holder_leaves()
    {
        var rw = new SlimReaderWriterLock(spinCount: 0);
        var reader = new HeldLock(rw, write: false, biased: true);
        var release = new Thread(() => { Thread.Sleep(20); reader.Release(); });
        release.Start();
        Assert.True(rw.TryEnterWriteLock(TimeSpan.FromSeconds(30)));
        Assert.True(rw.IsWriteLockHeld);
        Assert.Throws<LockRecursionException>(() => rw.TryEnterWriteLock(TimeSpan.FromSeconds(1)));
        Assert.Throws<LockRecursionException>(() => rw.TryEnterReadLock(TimeSpan.FromSeconds(1)));
        rw.ExitWriteLock();
        release.Join();
        reader.Dispose();
    }

    [Fact]
    public void Bad_timeouts_are_refused()
    {
        var rw = new SlimReaderWriterLock();
        Assert.Throws<ArgumentOutOfRangeException>(() => rw.TryEnterReadLock(-2));
        Assert.Throws<ArgumentOutOfRangeException>(() => rw.TryEnterWriteLock(-2));
        Assert.Throws<ArgumentOutOfRangeException>(() => rw.TryEnterReadLock(TimeSpan.FromMilliseconds(-5)));
        Assert.Throws<ArgumentOutOfRangeException>(() => rw.TryEnterWriteLock(TimeSpan.FromDays(30)));
        Assert.Equal(0, rw.CurrentReadCount);
    }

    /// <summary>A lock side held by a thread of its own until <see cref="Release"/>.</summary>
    internal sealed class HeldLock : IDisposable
    {
        private readonly ManualResetEventSlim _release = new();
        private readonly Thread _thread;
        private readonly List<Exception> _errors = [];

        public HeldLock(SlimReaderWriterLock rw, bool write, bool biased)
        {
            using var taken = new ManualResetEventSlim();
            _thread = EventTestSupport.Start(() =>
            {
                var warm = new SlimReaderWriterLock(); // a thread's first read lock goes through the state word
                warm.EnterReadLock();
                warm.ExitReadLock();
                if (write) rw.EnterWriteLock();
                else rw.EnterReadLock();
                Assert.True(write || rw.IsBiasedReadHeld == biased, "held through the wrong path");
                taken.Set();
                _release.Wait();
                if (write) rw.ExitWriteLock();
                else rw.ExitReadLock();
            }, _errors, write ? "writer" : "reader");
            Assert.True(taken.Wait(EventTestSupport.Stall), "the holder did not take the lock");
        }

        public void Release()
        {
            _release.Set();
            Assert.True(_thread.Join(EventTestSupport.Stall), "the holder did not leave");
            Assert.Empty(_errors);
        }

        public void Dispose()
        {
            if (_thread.IsAlive) Release();
            _release.Dispose();
        }
    }
}
