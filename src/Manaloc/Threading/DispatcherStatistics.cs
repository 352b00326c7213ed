namespace Manaloc.Threading;

/// <summary>Counters of a <see cref="DedicatedThreadDispatcher"/> since it was created (<see cref="DedicatedThreadDispatcher.GetStatistics"/>).</summary>
/// <remarks>A value type snapshot; safe to pass between threads. The same shape as the pools' <see cref="Pooling.PoolStatistics"/>.</remarks>
public readonly record struct DispatcherStatistics
{
    /// <summary>Items queued now (accepted and not yet taken by a worker, the drain or a drop).</summary>
    public long Queued { get; internal init; }

    /// <summary>Items accepted.</summary>
    public long Posted { get; internal init; }

    /// <summary>Items run by the workers, whether they returned or threw.</summary>
    public long Executed { get; internal init; }

    /// <summary>Items that threw (a subset of <see cref="Executed"/>).</summary>
    public long Failed { get; internal init; }

    /// <summary>Posts refused: a full queue in <see cref="FullQueueMode.FailFast"/> mode or for <see cref="DedicatedThreadDispatcher.TryPost"/>, a shutdown, or a <see cref="DedicatedThreadDispatcher.PostAsync"/> whose token was cancelled before the item was queued.</summary>
    public long Rejected { get; internal init; }

    /// <summary>Items removed by <see cref="FullQueueMode.DropOldest"/> and handed to the drop callback.</summary>
    public long Dropped { get; internal init; }

    /// <summary>Items handed back by the shutdown because they did not run before its deadline.</summary>
    public long Returned { get; internal init; }

    /// <summary>The deepest the queue has been, sampled when items are accepted: exact when the queue fills (a post finds it full); otherwise sampled on every 64th item, so a peak between samples may read up to 63 low. Sampling keeps producers from reading the workers' head index on every post.</summary>
    public long DeepestQueue { get; internal init; }

    /// <summary>Workers that were pinned to their processor (see <see cref="DispatcherOptions.ProcessorAffinity"/>).</summary>
    public int PinnedThreads { get; internal init; }

    /// <summary>Times busy workers yielded their processor after about 100 µs of continuous work, so a thread the scheduler queued behind them is not kept waiting a time slice.</summary>
    public long VoluntaryYields { get; internal init; }

    /// <summary>Time the workers have spent awake (running items or looking for them), summed over workers; timed on the options' <see cref="TimeProvider"/> per awake interval, not per item, and never less than an earlier snapshot's.</summary>
    public TimeSpan BusyTime { get; internal init; }
}
