using Microsoft.AspNetCore.Http;

namespace Manaloc.AspNetCore.Dispatching;

/// <summary>
/// Settings of one named dispatcher registered by
/// <see cref="ManalocServiceCollectionExtensions.AddDedicatedDispatcher"/>; bound from the configuration
/// section <c>Manaloc:Dispatchers:{name}</c> and validated when the host starts.
/// </summary>
/// <remarks>
/// <para>Why a share per client: the dispatcher's queue is bounded, and one client sending as fast as it
/// can would otherwise fill it, so every other client's work would wait behind the flood. With a share,
/// a client over it waits in its own line (<see cref="ClientLine"/>), and past that is answered
/// <see cref="OverShareStatusCode"/> (429 by default): the queue keeps room for the others.</para>
/// <para>Thread safety: set it up before the host starts; the dispatcher reads it once.</para>
/// </remarks>
public sealed class DedicatedDispatcherOptions
{
    /// <summary>The configuration section under which each dispatcher's section is named: <c>Manaloc:Dispatchers</c>.</summary>
    public const string SectionPrefix = "Manaloc:Dispatchers";

    /// <summary>Worker threads (1 to 1024; default: the processor count).</summary>
    public int ThreadCount { get; set; } = Environment.ProcessorCount;

    /// <summary>Queued items the dispatcher holds at most (1 to 1,073,741,824; default 10,000); a request finding it full is answered <see cref="FullQueueStatusCode"/>.</summary>
    public int Capacity { get; set; } = Threading.DispatcherOptions.DefaultCapacity;

    /// <summary>Work items one client may have queued or running at once (at least 1; default 8); over it a request waits in the client's line (<see cref="ClientLine"/>).</summary>
    /// <remarks>Keep it below <see cref="ThreadCount"/> where one client must not hold the CPU: a client allowed as many items
    /// as there are threads can keep every worker, so every core the dispatcher has, busy, and the others' work waits
    /// behind its queued items and competes with it for the cores.</remarks>
    public int ClientShare { get; set; } = 8;

    /// <summary>Requests of one client that may wait for its share when it has the share queued or running (zero or more; default 16); over it a request is answered <see cref="OverShareStatusCode"/>.</summary>
    /// <remarks>Waiting holds no thread: a flooder's extra requests wait for its own work to finish, so it is slowed to its share instead of coming straight back.</remarks>
    public int ClientLine { get; set; } = 16;

    /// <summary>The status of a request over its client's share (400 to 599; default 429 Too Many Requests, sent with <c>Retry-After: 1</c>).</summary>
    public int OverShareStatusCode { get; set; } = 429;

    /// <summary>The status of a request finding the queue full, the dispatcher not started or shutting down, or its work abandoned at the drain deadline (400 to 599; default 503 Service Unavailable).</summary>
    public int FullQueueStatusCode { get; set; } = 503;

    /// <summary>How long the host's stop waits for queued work to run (zero or more; default 10 s); also bounded by the host's own shutdown timeout.</summary>
    public TimeSpan DrainTimeout { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>Who a request's client is, for the share; null (the default): the remote IP address, or the connection when there is none.</summary>
    /// <remarks>Behind a proxy every request has the proxy's address: key on the forwarded address, an API key or the user instead. Not bound from configuration.</remarks>
    public Func<HttpContext, string>? ClientKey { get; set; }

    /// <summary>Every problem with these values, each naming its key under <paramref name="section"/>; empty when they are valid.</summary>
    internal List<string> Problems(string section)
    {
        var problems = new List<string>();
        if (ThreadCount is < 1 or > 1024) problems.Add($"{section}:{nameof(ThreadCount)} must be between 1 and 1024 (was {ThreadCount}).");
        if (Capacity is < 1 or > Threading.DispatcherOptions.MaxCapacity) problems.Add($"{section}:{nameof(Capacity)} must be between 1 and {Threading.DispatcherOptions.MaxCapacity} (was {Capacity}).");
        if (ClientShare < 1) problems.Add($"{section}:{nameof(ClientShare)} must be at least 1 (was {ClientShare}).");
        if (ClientLine < 0) problems.Add($"{section}:{nameof(ClientLine)} must not be negative (was {ClientLine}).");
        if (OverShareStatusCode is < 400 or > 599) problems.Add($"{section}:{nameof(OverShareStatusCode)} must be an error status, 400 to 599 (was {OverShareStatusCode}).");
        if (FullQueueStatusCode is < 400 or > 599) problems.Add($"{section}:{nameof(FullQueueStatusCode)} must be an error status, 400 to 599 (was {FullQueueStatusCode}).");
        if (DrainTimeout < TimeSpan.Zero) problems.Add($"{section}:{nameof(DrainTimeout)} must not be negative (was {DrainTimeout}).");
        return problems;
    }
}
