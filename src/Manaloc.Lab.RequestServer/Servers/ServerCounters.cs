namespace Manaloc.Lab.RequestServer.Servers;

/// <summary>
/// What a server did, counted the same way in every build. Identity, once nothing is in flight:
/// <c>Received = Ok + Busy + Expired + Error + Unanswered</c>.
/// </summary>
/// <remarks>Thread safety: interlocked increments; a snapshot read while requests run is approximate.</remarks>
public sealed class ServerCounters
{
    private long _received, _ok, _busy, _expired, _error, _unanswered, _shutdownBusy, _malformedStreams, _truncated, _connections, _refused, _control, _controlAllocated;

    /// <summary>Load requests read whole (every frame with an intact length, control requests excluded).</summary>
    public long Received => Volatile.Read(ref _received);
    /// <summary>Answered <c>ok</c>.</summary>
    public long Ok => Volatile.Read(ref _ok);
    /// <summary>Answered <c>busy</c> (shutting down, or over the share with busy-over-share).</summary>
    public long Busy => Volatile.Read(ref _busy);
    /// <summary>Answered <c>expired</c>.</summary>
    public long Expired => Volatile.Read(ref _expired);
    /// <summary>Answered <c>error</c> (bad op or payload; the bad-length answer is counted in <see cref="MalformedStreams"/>).</summary>
    public long Error => Volatile.Read(ref _error);
    /// <summary>Received but the answer could not be written: the client's connection was gone.</summary>
    public long Unanswered => Volatile.Read(ref _unanswered);
    /// <summary>Of <see cref="Busy"/>: accepted requests not run because the shutdown's drain deadline passed.</summary>
    public long ShutdownBusy => Volatile.Read(ref _shutdownBusy);
    /// <summary>Connections closed because a frame had an impossible length.</summary>
    public long MalformedStreams => Volatile.Read(ref _malformedStreams);
    /// <summary>Connections that ended in the middle of a frame.</summary>
    public long Truncated => Volatile.Read(ref _truncated);
    /// <summary>Connections accepted.</summary>
    public long Connections => Volatile.Read(ref _connections);
    /// <summary>Connections refused (over the connection cap, or during shutdown).</summary>
    public long Refused => Volatile.Read(ref _refused);
    /// <summary>Control (stats) requests answered.</summary>
    public long Control => Volatile.Read(ref _control);

    /// <summary>Managed bytes allocated answering stats requests (taking and serializing snapshots): not the load's.</summary>
    public long ControlAllocatedBytes => Volatile.Read(ref _controlAllocated);

    internal void CountControlAllocation(long bytes) => Interlocked.Add(ref _controlAllocated, bytes);
    internal void CountReceived() => Interlocked.Increment(ref _received);
    internal void CountUnanswered() => Interlocked.Increment(ref _unanswered);
    internal void CountUnanswered(long count) => Interlocked.Add(ref _unanswered, count);
    internal void CountShutdownBusy() => Interlocked.Increment(ref _shutdownBusy);
    internal void CountMalformedStream() => Interlocked.Increment(ref _malformedStreams);
    internal void CountTruncated() => Interlocked.Increment(ref _truncated);
    internal void CountConnection() => Interlocked.Increment(ref _connections);
    internal void CountRefused() => Interlocked.Increment(ref _refused);
    internal void CountControl() => Interlocked.Increment(ref _control);

    /// <summary>Counts an answer that reached the socket.</summary>
    internal void CountAnswered(Protocol.Status status) => CountAnswered(status, 1);

    /// <summary>Counts <paramref name="count"/> answers of one status that reached the socket.</summary>
    internal void CountAnswered(Protocol.Status status, long count)
    {
        switch (status)
        {
            case Protocol.Status.Ok: Interlocked.Add(ref _ok, count); break;
            case Protocol.Status.Busy: Interlocked.Add(ref _busy, count); break;
            case Protocol.Status.Expired: Interlocked.Add(ref _expired, count); break;
            default: Interlocked.Add(ref _error, count); break;
        }
    }

    /// <summary>Received requests not yet answered nor counted unanswered.</summary>
    public long InFlight => Received - Ok - Busy - Expired - Error - Unanswered;
}
