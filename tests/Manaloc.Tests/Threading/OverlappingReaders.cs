using Manaloc.Threading;

namespace Manaloc.Tests.Threading;

/// <summary>
/// Threads that take and release a read lock in a loop, each holding it long enough that the readers overlap
/// continuously (the lock is never free of readers on its own), until <see cref="Stop"/>.
/// </summary>
internal sealed class OverlappingReaders
{
    private readonly List<Thread> _threads;
    private bool _stop;
    private long _reads;

    public OverlappingReaders(SlimReaderWriterLock rw, int count, List<Exception> errors)
    {
        _threads = Enumerable.Range(0, count).Select(i => EventTestSupport.Start(() =>
        {
            while (!Volatile.Read(ref _stop))
            {
                rw.EnterReadLock();
                Thread.SpinWait(200); // long enough that readers overlap continuously
                Interlocked.Increment(ref _reads);
                rw.ExitReadLock();
            }
        }, errors, $"reader {i}")).ToList();
        EventTestSupport.WaitUntil(() => Reads > 1000, "readers running");
    }

    /// <summary>Read locks taken and released so far, all readers together.</summary>
    public long Reads => Volatile.Read(ref _reads);

    /// <summary>Tells the readers to finish and waits for them.</summary>
    public void Stop()
    {
        Volatile.Write(ref _stop, true);
        foreach (var t in _threads) t.Join();
    }
}
