using System.Diagnostics;

namespace Manaloc.Threading;

// The consumer side: the worker loop, sleeping when idle, running items and reporting failures.
public sealed partial class DedicatedThreadDispatcher
{
    private readonly Padded<WorkerStats>[] _stats; // one padded block per worker: no false sharing between workers

    private struct WorkerStats
    {
        public long Executed;  // items run, including failed ones; written by the owner only
        public long Failed;
        public long BusyTicks; // timestamp ticks spent awake, completed intervals
        public long BusySince; // timestamp the current awake interval began; 0 while asleep
        public int BusyVersion; // seqlock over BusyTicks + BusySince: odd while EndBusy updates them
    }

    private void WorkerMain(int index, int processor)
    {
        t_current = this;
        if (processor >= 0 && TryPinCurrentThread(processor))
        {
            Interlocked.Increment(ref _pinned);
        }
        ref WorkerStats stats = ref _stats[index].Value;
        var pacer = default(YieldPacer);
        try
        {
            Volatile.Write(ref stats.BusySince, Math.Max(1, _timeProvider.GetTimestamp()));
            pacer.Start();
            while (!_abandon) // volatile read: the shutdown deadline, one read per item (the ScheduledValue idea)
            {
                if (TryDequeue(out var item))
                {
                    Execute(item, ref stats);
                    if (pacer.AfterItem()) Interlocked.Increment(ref _voluntaryYields); // statistics only: orders nothing
                    continue;
                }
                long tail = Volatile.Read(ref _tail.Value);
                if ((tail & ClosedBit) != 0)
                {
                    // Closed: the tail is final. Exit once everything claimed has been taken.
                    if (Volatile.Read(ref _head.Value) == (tail & ~ClosedBit)) break;
                    continue;
                }
                if (SpinForWork()) continue;
                EndBusy(ref stats);
                WaitForWork();
                Volatile.Write(ref stats.BusySince, Math.Max(1, _timeProvider.GetTimestamp()));
                pacer.Start();
            }
        }
        finally
        {
            EndBusy(ref stats);
            t_current = null;
            // The last worker out completes Completion: Interlocked orders every worker's exit before it.
            if (Interlocked.Decrement(ref _liveWorkers) == 0)
            {
                Unregister();
                _completion.TrySetResult();
            }
        }
    }

    private void Execute(Action item, ref WorkerStats stats)
    {
        try
        {
            item();
        }
        catch (Exception e)
        {
            // Only this worker writes its counters, so read-add-write needs no Interlocked; the
            // Volatile.Write is a single atomic 64-bit store (no tearing for readers on 32-bit) and
            // pairs with the readers' Volatile.Read. Readers may see a slightly stale count.
            Volatile.Write(ref stats.Failed, stats.Failed + 1);
            ReportFailure(e);
        }
        Volatile.Write(ref stats.Executed, stats.Executed + 1); // as above
    }

    private void ReportFailure(Exception e)
    {
        if (ManalocEventSourceLog.IsEnabled())
        {
            ManalocEventSourceLog.DispatcherItemFailed(_name, Describe(e));
        }
        var handler = _onItemFailed;
        if (handler is null) return;
        try
        {
            handler(e);
        }
        catch (Exception inner)
        {
            // The handler itself threw: log it and keep the worker alive.
            ManalocEventSourceLog.DispatcherItemFailed(_name, "OnItemFailed threw " + Describe(inner));
        }
    }

    /// <summary>"Type: Message", formatted inside a try: a throwing Message getter must not kill the worker.</summary>
    private static string Describe(Exception e)
    {
        string type = e.GetType().FullName ?? e.GetType().Name;
        try
        {
            return $"{type}: {e.Message}";
        }
        catch (Exception)
        {
            return type + " (its Message property threw)";
        }
    }

    private static Diagnostics.ManalocEventSource ManalocEventSourceLog => Diagnostics.ManalocEventSource.Log;

    /// <summary>
    /// Spins, then yields, for a bounded while before sleeping: a wake-up costs a system call on
    /// the producer's side and a scheduling delay on ours, and a flood of tiny items would
    /// otherwise pay both every time the workers momentarily catch up. The yields (after the first
    /// ten busy spins) hand the core to a runnable producer rather than burning it.
    /// </summary>
    private bool SpinForWork()
    {
        SpinWait spin = default;
        for (int i = 0; i < SpinIterations; i++)
        {
            spin.SpinOnce(sleep1Threshold: -1);
            if (Volatile.Read(ref _head.Value) != (Volatile.Read(ref _tail.Value) & ~ClosedBit) || _abandon) return true;
        }
        return false;
    }

    /// <summary>SpinWait iterations before a worker sleeps or a producer blocks: 10 busy spins, then yields.</summary>
    private const int SpinIterations = 30;

    /// <summary>
    /// Sleeps until there is work, a shutdown or the deadline. Dekker handshake with TryEnqueue: we
    /// increment _idleWorkers (a full fence) and then re-check head against tail; a producer CASes
    /// the tail (a full fence) and then reads _idleWorkers. If our re-check missed an item, its
    /// producer sees us idle and pulses _workLock — which it can only take once we are inside
    /// Monitor.Wait, so the pulse cannot fall between our check and our wait. Close and the
    /// deadline set their flags before PulseAll under the same lock, so they cannot be missed either.
    /// </summary>
    private void WaitForWork()
    {
        lock (_workLock)
        {
            Interlocked.Increment(ref _idleWorkers); // full fence: before the re-check below
            try
            {
                while (!_abandon)
                {
                    long tail = Volatile.Read(ref _tail.Value);
                    if ((tail & ClosedBit) != 0 || Volatile.Read(ref _head.Value) != tail) break;
                    Monitor.Wait(_workLock);
                }
            }
            finally
            {
                Interlocked.Decrement(ref _idleWorkers);
            }
        }
    }

    /// <summary>
    /// Moves the current awake interval into BusyTicks. The two fields change together under a
    /// seqlock (BusyVersion odd meanwhile), so BusyTime never adds the interval twice (new total
    /// plus old start) or drops it (old total, no start). Starting an interval changes one field
    /// only (BusySince from 0), which needs no seqlock.
    /// </summary>
    private void EndBusy(ref WorkerStats stats)
    {
        long since = Volatile.Read(ref stats.BusySince);
        if (since == 0) return;
        long now = _timeProvider.GetTimestamp(); // before the odd version: a throwing clock cannot leave it odd
        Interlocked.Increment(ref stats.BusyVersion); // odd; full fence: a reader that sees either write below sees this first
        Volatile.Write(ref stats.BusyTicks, stats.BusyTicks + Math.Max(0, now - since));
        Volatile.Write(ref stats.BusySince, 0);
        Volatile.Write(ref stats.BusyVersion, stats.BusyVersion + 1); // even; release: after both writes above
        Debug.Assert(stats.BusyTicks >= 0);
        Debug.Assert((stats.BusyVersion & 1) == 0, "the seqlock is released");
    }
}
