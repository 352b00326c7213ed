using Manaloc.Threading;

namespace Manaloc.Tests.Threading;

/// <summary>
/// Invariant checker under stress: threads mix reads and writes at random with random hold
/// times; inside, a writer must be alone and a reader must see no writer, and a writer's two-word
/// update must never be seen half-done. Some reads nest inside a read lock on a second lock (which
/// sees writers too), so the per-thread record's several-locks path runs under contention as well.
/// A lost wakeup or deadlock shows as a stall; a thread starved for the watchdog's whole stall limit
/// shows as the slowest thread making no progress (the watchdog follows the minimum per-thread
/// count). Shorter starvation is not caught: readers can wait long behind a stream of writers.
/// </summary>
public sealed class SlimReaderWriterLockStressTests
{
    [Theory]
    [InlineData(4, 2, 20)]   // mostly readers, spinning
    [InlineData(4, 50, 0)]   // half writers, always blocking when contended
    [InlineData(6, 10, 2)]   // oversubscribed, short spins
    [InlineData(3, 90, 20)]  // writers almost only: readers must still get in
    public void Nobody_is_ever_inside_with_a_writer(int threads, int writerPercent, int spinCount)
        => Run(threads, writerPercent, new SlimReaderWriterLock(spinCount), new SlimReaderWriterLock(spinCount), opsPerThread: 120_000);

    /// <summary>
    /// The same checker with the bias turned back on as soon as a reader on the state word sees it off
    /// (inhibit factor 0), so writers revoke it over and over while biased readers come and go: a
    /// writer that skipped the slot scan, or a missing fence on either side of the Dekker handshake,
    /// lets a writer in beside a biased reader. More operations than above: a missing writer fence
    /// shows only when the flag's store is still in the store buffer as the scan reads a slot, a
    /// window of a few nanoseconds (120,000 per thread caught it in 5 runs of 7, 400,000 in 6 of 6).
    /// </summary>
    [Theory]
    [InlineData(4, 2, 20)]
    [InlineData(4, 10, 0)]   // revocations that sleep until a biased reader's exit wakes them
    [InlineData(6, 5, 2)]    // oversubscribed: biased readers preempted inside
    [InlineData(3, 50, 20)]
    public void Nobody_is_ever_inside_with_a_writer_while_readers_are_biased(int threads, int writerPercent, int spinCount)
    {
        var rw = new SlimReaderWriterLock(spinCount, inhibitFactor: 0);
        Run(threads, writerPercent, rw, new SlimReaderWriterLock(spinCount, inhibitFactor: 0), opsPerThread: 400_000);
        // Every new lock starts biased, so one revocation proves nothing: the bias must have come back many times
        // (4,000-14,000 revocations per case measured; a bias that never comes back makes one). Whether a revocation
        // met a biased reader inside is left to chance here (under load the threads can run one at a time: one run
        // made 3,992 revocations and met none); the bias tests force that meeting.
        Assert.True(rw.Revocations >= 100, $"only {rw.Revocations} revocations ({rw.RevocationsThatWaited} met a biased reader): the bias did not keep coming back");
    }

    private static void Run(int threads, int writerPercent, SlimReaderWriterLock rw, SlimReaderWriterLock outer, int opsPerThread)
    {
        // outer: always taken before rw, never while holding rw: no lock-order cycle.
        int readersInside = 0, writersInside = 0, outerWritersInside = 0;
        long a = 0, b = 0; // a writer keeps b == -a; a reader checks it
        long violations = 0, reads = 0, writes = 0;
        var progress = new long[threads * 16]; // per thread, padded
        var errors = new List<Exception>();

        var workers = Enumerable.Range(0, threads).Select(t => EventTestSupport.Start(() =>
        {
            ulong rng = (ulong)(t + 1) * 0x9E3779B97F4A7C15UL;
            for (int i = 0; i < opsPerThread; i++)
            {
                rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
                if ((int)(rng % 100) < writerPercent)
                {
                    rw.EnterWriteLock();
                    if (Interlocked.Increment(ref writersInside) != 1 || Volatile.Read(ref readersInside) != 0) Interlocked.Increment(ref violations);
                    a++;
                    if ((rng & 0x300) == 0) Thread.SpinWait(20);
                    b--;
                    writes++;
                    Interlocked.Decrement(ref writersInside);
                    rw.ExitWriteLock();
                }
                else if ((rng & 0x70000) == 0)
                {
                    // Rarely: write the outer lock, alone.
                    outer.EnterWriteLock();
                    if (Interlocked.Increment(ref outerWritersInside) != 1) Interlocked.Increment(ref violations);
                    Interlocked.Decrement(ref outerWritersInside);
                    outer.ExitWriteLock();
                }
                else
                {
                    bool nested = (rng & 0x4000) == 0; // about one read in four also holds the outer lock
                    if (nested)
                    {
                        outer.EnterReadLock();
                        if (Volatile.Read(ref outerWritersInside) != 0) Interlocked.Increment(ref violations);
                    }
                    rw.EnterReadLock();
                    Interlocked.Increment(ref readersInside);
                    if (Volatile.Read(ref writersInside) != 0) Interlocked.Increment(ref violations);
                    long seenA = a;
                    if ((rng & 0x300) == 0) Thread.SpinWait(20);
                    if (seenA + b != 0) Interlocked.Increment(ref violations);
                    Interlocked.Increment(ref reads);
                    Interlocked.Decrement(ref readersInside);
                    // Released in either order: the record must cope with out-of-order exits.
                    if (nested && (rng & 0x8000) == 0) outer.ExitReadLock();
                    rw.ExitReadLock();
                    if (nested && outer.IsReadLockHeld) outer.ExitReadLock();
                }
                if ((rng & 0xF000) == 0) Thread.Yield();
                Volatile.Write(ref progress[t * 16], i + 1);
            }
        }, errors, $"worker {t}")).ToList();

        // Progress = the slowest thread's count: a stall anywhere, or one thread starved while the others run, fails.
        EventTestSupport.JoinWithWatchdog(workers, () => Enumerable.Range(0, threads).Min(t => Volatile.Read(ref progress[t * 16])),
            () => $"per-thread progress [{string.Join(", ", Enumerable.Range(0, threads).Select(t => Volatile.Read(ref progress[t * 16])))}], "
                + $"readers {rw.CurrentReadCount}, waiting writers {rw.WaitingWriters}, biased {rw.IsReadBiased}, inside r={readersInside} w={writersInside}");

        Assert.Empty(errors);
        Assert.Equal(0, violations);
        Assert.All(Enumerable.Range(0, threads), t => Assert.Equal(opsPerThread, progress[t * 16]));
        Assert.Equal(writes, a);
        Assert.Equal(-a, b);
        Assert.True(reads > 0 || writerPercent == 100);
        Assert.Equal(0, rw.CurrentReadCount);
        Assert.Equal(0, outer.CurrentReadCount);
        Assert.Equal(0, rw.WaitingWriters);
        Assert.True(rw.TryEnterWriteLock());
        rw.ExitWriteLock();
        Assert.True(outer.TryEnterWriteLock());
        outer.ExitWriteLock();
    }
}
