using System.Net;

namespace Manaloc.Lab.RequestServer.Servers;

/// <summary>The builds of the server.</summary>
public enum ServerBuild
{
    /// <summary>Manaloc parts: pooled buffers and requests, a bounded dedicated dispatcher with a share per connection, deadlines checked before work.</summary>
    Manaloc,
    /// <summary>The framework's defaults as a careful engineer writes them: async sockets, <c>new byte[]</c> per frame, an unbounded channel to ThreadPool workers, <c>DateTime.UtcNow</c> deadlines.</summary>
    Bcl,
    /// <summary>A Kestrel connection handler over System.IO.Pipelines, running each request inline on its connection.</summary>
    Kestrel,
    /// <summary>Kestrel with Manaloc.AspNetCore: Manaloc's memory pool for the transport, and each connection's frames run in turns on a hosted dedicated dispatcher.</summary>
    KestrelManaloc,
}

/// <summary>Sizes and limits of a server. Defaults suit the lab's load on a small machine.</summary>
public sealed record ServerOptions
{
    /// <summary>Port on 127.0.0.1; 0 picks a free one.</summary>
    public int Port { get; init; }
    /// <summary>Worker threads (Manaloc dispatcher, BCL channel readers); the processor count by default.</summary>
    public int Workers { get; init; } = Environment.ProcessorCount;
    /// <summary>Manaloc: requests one connection may have queued or running; over it the connection is not read until half of them finished.</summary>
    public int ConnectionShare { get; init; } = 32;
    /// <summary>Manaloc: answer busy to every request over the share instead of pausing the connection (the busy answers then cost the server CPU at the flooder's pace).</summary>
    public bool BusyOverShare { get; init; }
    /// <summary>Connections served at once (every build); more are closed at accept and counted refused.</summary>
    public int MaxConnections { get; init; } = 128;
    /// <summary>How long a blocked send may take before the connection is given up (a client that stops reading).</summary>
    public TimeSpan SendTimeout { get; init; } = TimeSpan.FromSeconds(5);

    /// <summary>
    /// The most buffer memory the Manaloc build holds for requests with <paramref name="connections"/> open:
    /// per connection, its share of requests with a payload copy and an answer each (at most 128 KiB each,
    /// pooled power-of-two sizes; unsent answers double-buffered), its receive buffer (128 KiB) and its reply
    /// batch (16 KiB). Pooling may keep that much again idle for reuse.
    /// </summary>
    public long HeldBytesBound(int connections)
    {
        const long MaxBuffer = 128 * 1024;
        return connections * (MaxBuffer + 16 * 1024 + 3L * ConnectionShare * MaxBuffer);
    }
}

/// <summary>What a shutdown did: the counters at the end and what was dropped, by kind. Nothing is dropped silently.</summary>
/// <param name="Final">The counters once every connection closed.</param>
/// <param name="Elapsed">From the shutdown request to the last connection closed.</param>
/// <param name="ConnectionsOpenAtStart">Connections open when the shutdown began.</param>
public sealed record ShutdownReport(ServerStats Final, TimeSpan Elapsed, int ConnectionsOpenAtStart)
{
    /// <summary>Accepted requests answered busy because the drain deadline passed before they ran.</summary>
    public long NotRun => Final.ShutdownBusy;
    /// <summary>Requests whose answer could not be written (connection gone).</summary>
    public long Unanswered => Final.Unanswered;
    /// <summary>Requests neither answered nor counted unanswered: must be 0.</summary>
    public long Lost => Final.InFlight;

    /// <summary>One line for the console.</summary>
    public override string ToString()
        => $"shutdown in {Elapsed.TotalMilliseconds:0} ms: received {Final.Received} = ok {Final.Ok} + busy {Final.Busy} (of which not run at the drain deadline {NotRun}) + expired {Final.Expired} + error {Final.Error} + unanswered {Unanswered}; lost {Lost}; {ConnectionsOpenAtStart} connections open at start, {Final.MalformedStreams} closed for bad frames, {Final.Truncated} truncated";
}

/// <summary>A running server of one build.</summary>
public interface IRequestServer : IAsyncDisposable
{
    /// <summary>The build.</summary>
    ServerBuild Build { get; }
    /// <summary>Where it listens (127.0.0.1).</summary>
    IPEndPoint EndPoint { get; }
    /// <summary>Its live counters.</summary>
    ServerCounters Counters { get; }
    /// <summary>
    /// Stops accepting connections, answers busy to every request read from now on, runs accepted requests
    /// until <paramref name="drain"/> passes and answers busy to those still waiting, then closes every connection.
    /// </summary>
    Task<ShutdownReport> ShutdownAsync(TimeSpan drain);
}
