namespace Manaloc.Threading;

/// <summary>What a <see cref="DedicatedThreadDispatcher"/> does with a new item when its queue is full.</summary>
/// <remarks>
/// Why a choice: blocking producers bounds the memory a queue holds at no cost in throughput when the
/// consumer is the bottleneck anyway. Callers that must never block want a refusal instead; feeds where only
/// recent items matter (telemetry, quotes) want the oldest dropped.
/// </remarks>
public enum FullQueueMode
{
    /// <summary>
    /// The producer waits for room (the default): <c>Post</c> blocks, <c>PostAsync</c> waits
    /// asynchronously, <c>TryPost</c> returns false.
    /// </summary>
    Block = 0,

    /// <summary>The item is refused: <c>TryPost</c> returns false, <c>Post</c> and <c>PostAsync</c> throw <see cref="InvalidOperationException"/>.</summary>
    FailFast = 1,

    /// <summary>
    /// The oldest queued item is removed and handed to <see cref="DispatcherOptions.OnItemDropped"/>
    /// (required in this mode, so nothing disappears unseen); the new item is always accepted.
    /// </summary>
    DropOldest = 2,
}
