using Manaloc.Threading;

namespace Manaloc.Tests.Threading;

/// <summary>
/// Invariant checker under stress: threads mix reads and writes at random with random hold
/// times; inside, a writer must be alone and a reader must see no writer, and a writer's two-word
/// update must never be seen half-done. A lost wakeup or deadlock shows as a stall.
/// </summary>
public sealed class SlimReaderWriterLockStressTests
{
    [Theory]
    [InlineData(4, 2, 20)]   // mostly readers, spinning
    [InlineData(4, 50, 0)]   // half writers, always blocking when contended
    [InlineData(6, 10, 2)]   // oversubscribed, short spins
    public void Nobody_is_ever_inside_with_a_writer(int threads, int writerPercent, int spinCount)
    {
        const int OpsPerThread = 150_000;
        var rw = new SlimReaderWriterLock(spinCount);
        int readersInside = 0, writersInside = 0;
        long a = 0, b = 0; // a writer keeps b == -a; a reader checks it
        long done = 0, violations = 0, reads = 0, writes = 0;
        var errors = new List<Exception>();

        var workers = Enumerable.Range(0, threads).Select(t => EventTestSupport.Start(() =>
        {
            ulong rng = (ulong)(t + 1) * 0x9E3779B97F4A7C15UL;
            for (int i = 0; i < OpsPerThread; i++)
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
                else
                {
                    rw.EnterReadLock();
                    Interlocked.Increment(ref readersInside);
                    if (Volatile.Read(ref writersInside) != 0) Interlocked.Increment(ref violations);
                    long seenA = a;
                    if ((rng & 0x300) == 0) Thread.SpinWait(20);
                    if (seenA + b != 0) Interlocked.Increment(ref violations);
                    Interlocked.Increment(ref reads);
                    Interlocked.Decrement(ref readersInside);
                    rw.ExitReadLock();
                }
                if ((rng & 0xF000) == 0) Thread.Yield();
                Interlocked.Increment(ref done);
            }
        }, errors, $"worker {t}")).ToList();

        EventTestSupport.JoinWithWatchdog(workers, () => Volatile.Read(ref done),
            () => $"done {Volatile.Read(ref done)}, readers {rw.CurrentReadCount}, inside r={readersInside} w={writersInside}");

        Assert.Empty(errors);
        Assert.Equal(0, violations);
        Assert.Equal((long)threads * OpsPerThread, done);
        Assert.Equal(writes, a);
        Assert.Equal(-a, b);
        Assert.Equal(0, rw.CurrentReadCount);
        Assert.True(rw.TryEnterWriteLock());
        rw.ExitWriteLock();
    }
}
