namespace Manaloc.AspNetCore.Dispatching;

/// <summary>What a <see cref="HostedDispatcher"/> did with request work since the host started.</summary>
/// <param name="Completed">Work items that ran (including ones that threw).</param>
/// <param name="OverShare">Requests refused because their client had its share queued or running.</param>
/// <param name="Unavailable">Requests refused because the queue was full, or the dispatcher was not started or was shutting down.</param>
/// <param name="Abandoned">Accepted work items that had not run at the drain deadline (their requests were answered, and they were logged).</param>
/// <param name="ActiveClients">Clients with work queued or running now.</param>
/// <param name="Waiting">Requests waiting in their client's line now (over the share, not yet queued).</param>
/// <remarks>A snapshot of counters read one by one: under load the fields are each exact but not from one instant.</remarks>
public readonly record struct HostedDispatcherStatistics(long Completed, long OverShare, long Unavailable, long Abandoned, int ActiveClients, int Waiting);
