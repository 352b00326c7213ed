using System.Diagnostics.Tracing;

namespace Manaloc.Diagnostics;

/// <summary>
/// The one <see cref="EventSource"/> named <c>Manaloc</c>: misuse and leak events with fixed ids, for
/// dotnet-trace, PerfView or an in-process <see cref="EventListener"/>.
/// </summary>
/// <remarks>
/// Event ids are part of the contract and never reused: 1 leak, 2 double free, 3 double return,
/// 4 foreign return, 5 use after free, 6 pool trimmed, 7 dispatcher item failed, 8 buffer leak. Each method checks
/// <see cref="EventSource.IsEnabled()"/> first, so a disabled source costs one branch.
/// Internal, so no other code can raise Manaloc's events; the name is public as
/// <see cref="ManalocTelemetry.EventSourceName"/>. Thread safety: safe from any thread.
/// </remarks>
[EventSource(Name = ManalocTelemetry.EventSourceName)]
internal sealed class ManalocEventSource : EventSource
{
    /// <summary>The one instance.</summary>
    public static readonly ManalocEventSource Log = new();

    private ManalocEventSource() { }

    /// <summary>Objects were still alive when their allocator was disposed or asked for a leak report.</summary>
    [Event(1, Level = EventLevel.Warning, Message = "Leak: {1} live object(s) of {0} ({2} bytes)")]
    public void Leak(string typeName, long count, long bytes)
    {
        if (IsEnabled()) WriteEvent(1, typeName, count, bytes);
    }

    /// <summary>A block or object was freed twice.</summary>
    [Event(2, Level = EventLevel.Error, Message = "Double free of {0}")]
    public void DoubleFree(string what)
    {
        if (IsEnabled()) WriteEvent(2, what);
    }

    /// <summary>An object was returned to a pool twice.</summary>
    [Event(3, Level = EventLevel.Error, Message = "Double return to pool {0} of {1}")]
    public void DoubleReturn(string pool, string typeName)
    {
        if (IsEnabled()) WriteEvent(3, pool, typeName);
    }

    /// <summary>An object the pool never handed out was returned to it.</summary>
    [Event(4, Level = EventLevel.Error, Message = "Foreign return to pool {0} of {1}")]
    public void ForeignReturn(string pool, string typeName)
    {
        if (IsEnabled()) WriteEvent(4, pool, typeName);
    }

    /// <summary>A handle was used after its object was freed.</summary>
    [Event(5, Level = EventLevel.Error, Message = "Use after free of {0}")]
    public void UseAfterFree(string what)
    {
        if (IsEnabled()) WriteEvent(5, what);
    }

    /// <summary>A pool dropped idle objects.</summary>
    [Event(6, Level = EventLevel.Informational, Message = "Pool {0} trimmed {1} object(s): {2}")]
    public void PoolTrimmed(string pool, long count, string reason)
    {
        if (IsEnabled()) WriteEvent(6, pool, count, reason);
    }

    /// <summary>A dispatcher work item threw.</summary>
    [Event(7, Level = EventLevel.Warning, Message = "Dispatcher {0}: work item failed: {1}")]
    public void DispatcherItemFailed(string dispatcher, string error)
    {
        if (IsEnabled()) WriteEvent(7, dispatcher, error);
    }

    /// <summary>Debug mode: a rented buffer was collected before it was disposed; <paramref name="rentedAt"/> is the stack of its rent.</summary>
    [Event(8, Level = EventLevel.Warning, Message = "Leak: a RentedBuffer of {1} bytes from buffer manager {0} was never disposed; rented at {2}")]
    public void BufferLeak(string manager, int length, string rentedAt)
    {
        if (IsEnabled()) WriteEvent(8, manager, length, rentedAt);
    }
}
