namespace Manaloc.Threading;

/// <summary>Configuration of a <see cref="DedicatedThreadDispatcher"/>.</summary>
/// <remarks>
/// Every property has a usable default: one worker per processor, a 10,000-item queue, producers blocking when it is full, the system clock. Thread safety: read once by the
/// dispatcher's constructor; changing the options afterwards has no effect on it.
/// </remarks>
public sealed class DispatcherOptions
{
    /// <summary>The default queue capacity: 10,000 items.</summary>
    public const int DefaultCapacity = 10_000;

    /// <summary>The largest queue capacity: 2^30 items.</summary>
    public const int MaxCapacity = 1 << 30;

    /// <summary>Name of the dispatcher: its threads are named <c>{Name} #{i}</c>, and it tags events and metrics.</summary>
    public string Name { get; set; } = "manaloc-dispatcher";

    /// <summary>Number of worker threads; <see cref="Platform.Processors.AvailableCount"/> of <see cref="Platform.Processors.Current"/> by default. 1 to 1024.</summary>
    /// <remarks>
    /// Workers compete for processor time, so the default is what the process may really run on: the affinity mask
    /// lowered to the cgroup CPU quota, read when the process first asks (unlike <see cref="Environment.ProcessorCount"/>,
    /// it also sees a mask changed after start-up). More workers than that only take turns on the same processors.
    /// </remarks>
    public int ThreadCount { get; set; } = Platform.Processors.Current.AvailableCount;

    /// <summary>Maximum number of queued items; <see cref="DefaultCapacity"/> by default. 1 to <see cref="MaxCapacity"/>.</summary>
    public int Capacity { get; set; } = DefaultCapacity;

    /// <summary>What happens when the queue is full; <see cref="FullQueueMode.Block"/> by default.</summary>
    public FullQueueMode FullMode { get; set; } = FullQueueMode.Block;

    /// <summary>
    /// Processors to pin workers to, worker <c>i</c> to <c>ProcessorAffinity[i % Count]</c>; null
    /// (the default) leaves scheduling to the operating system.
    /// </summary>
    /// <remarks>
    /// Best effort: applied by each worker to itself (Linux <c>sched_setaffinity</c>, Windows
    /// <c>SetThreadAffinityMask</c>); a processor outside the process's allowed set, or another
    /// operating system, leaves that worker unpinned. <see cref="DispatcherStatistics.PinnedThreads"/>
    /// says how many succeeded.
    /// </remarks>
    public IReadOnlyList<int>? ProcessorAffinity { get; set; }

    /// <summary>The clock of shutdown deadlines and busy-time statistics; <see cref="TimeProvider.System"/> by default.</summary>
    public TimeProvider TimeProvider { get; set; } = TimeProvider.System;

    /// <summary>
    /// Called on the worker thread with the exception of an item that threw. The worker goes on
    /// with the next item either way; an exception from this handler is swallowed (and logged).
    /// </summary>
    public Action<Exception>? OnItemFailed { get; set; }

    /// <summary>
    /// Receives every item removed by <see cref="FullQueueMode.DropOldest"/>, on the posting thread;
    /// required in that mode. An exception from it goes to <see cref="OnItemFailed"/>.
    /// </summary>
    public Action<Action>? OnItemDropped { get; set; }
}
