namespace Manaloc.AspNetCore.Dispatching;

/// <summary>What a <see cref="HostedDispatcher"/> did with request work since the host started.</summary>
/// <remarks>A snapshot of counters read one by one: under load the fields are each exact but not from one instant.</remarks>
public readonly record struct HostedDispatcherStatistics
{
    /// <summary>Work items that ran (including ones that threw).</summary>
    public long Completed { get; internal init; }

    /// <summary>Requests refused because their client had its share queued or running.</summary>
    public long OverShare { get; internal init; }

    /// <summary>Requests refused because the queue was full, or the dispatcher was not started or was shutting down.</summary>
    public long Unavailable { get; internal init; }

    /// <summary>Accepted work items that had not run at the drain deadline (their requests were answered, and they were logged).</summary>
    public long Abandoned { get; internal init; }

    /// <summary>Clients with work queued or running now.</summary>
    public int ActiveClients { get; internal init; }

    /// <summary>Requests waiting in their client's line now (over the share, not yet queued).</summary>
    public int Waiting { get; internal init; }
}
