namespace Manaloc.Threading;

/// <summary>Counters of a <see cref="DedicatedThreadDispatcher"/> since it was created (<see cref="DedicatedThreadDispatcher.GetStatistics"/>).</summary>
/// <param name="Queued">Items queued now (accepted and not yet taken by a worker, the drain or a drop).</param>
/// <param name="Posted">Items accepted.</param>
/// <param name="Executed">Items run by the workers, whether they returned or threw.</param>
/// <param name="Failed">Items that threw (a subset of <paramref name="Executed"/>).</param>
/// <param name="Rejected">Posts refused: a full queue in <see cref="FullQueueMode.FailFast"/> mode or for <see cref="DedicatedThreadDispatcher.TryPost"/>, a shutdown, or a <see cref="DedicatedThreadDispatcher.PostAsync"/> whose token was cancelled before the item was queued.</param>
/// <param name="Dropped">Items removed by <see cref="FullQueueMode.DropOldest"/> and handed to the drop callback.</param>
/// <param name="Returned">Items handed back by the shutdown because they did not run before its deadline.</param>
/// <param name="DeepestQueue">The deepest the queue has been, sampled when items are accepted: exact when the queue fills (a post finds it full); otherwise sampled on every 64th item, so a peak between samples may read up to 63 low. Sampling keeps producers from reading the workers' head index on every post.</param>
/// <param name="PinnedThreads">Workers that were pinned to their processor (see <see cref="DispatcherOptions.ProcessorAffinity"/>).</param>
/// <param name="VoluntaryYields">Times busy workers yielded their processor after about 100 µs of continuous work, so a thread the scheduler queued behind them is not kept waiting a time slice.</param>
/// <param name="BusyTime">Time the workers have spent awake (running items or looking for them), summed over workers; measured on the options' <see cref="TimeProvider"/> per awake interval, not per item, and never less than an earlier snapshot's.</param>
/// <remarks>A value type snapshot; safe to pass between threads. The same shape as the pools' <see cref="Pooling.PoolStatistics"/>.</remarks>
public readonly record struct DispatcherStatistics(
    long Queued, long Posted, long Executed, long Failed, long Rejected, long Dropped, long Returned,
    long DeepestQueue, int PinnedThreads, long VoluntaryYields, TimeSpan BusyTime);
