using System.Diagnostics;
using System.Text.Json;

namespace Manaloc.Lab.RequestServer.Servers;

/// <summary>A server's counters and its process's memory and GC figures at one moment: the <c>stats</c> answer.</summary>
public sealed record ServerStats
{
    /// <summary>The build (<c>manaloc</c>, <c>bcl</c>, <c>kestrel</c>).</summary>
    public string Build { get; init; } = "";
    /// <summary>See <see cref="ServerCounters.Received"/>.</summary>
    public long Received { get; init; }
    /// <summary>Answered ok.</summary>
    public long Ok { get; init; }
    /// <summary>Answered busy.</summary>
    public long Busy { get; init; }
    /// <summary>Answered expired.</summary>
    public long Expired { get; init; }
    /// <summary>Answered error.</summary>
    public long Error { get; init; }
    /// <summary>See <see cref="ServerCounters.Unanswered"/>.</summary>
    public long Unanswered { get; init; }
    /// <summary>See <see cref="ServerCounters.ShutdownBusy"/>.</summary>
    public long ShutdownBusy { get; init; }
    /// <summary>See <see cref="ServerCounters.MalformedStreams"/>.</summary>
    public long MalformedStreams { get; init; }
    /// <summary>See <see cref="ServerCounters.Truncated"/>.</summary>
    public long Truncated { get; init; }
    /// <summary>See <see cref="ServerCounters.Connections"/>.</summary>
    public long Connections { get; init; }
    /// <summary>See <see cref="ServerCounters.Refused"/>.</summary>
    public long Refused { get; init; }
    /// <summary>Managed bytes the process has allocated so far, less what answering stats requests allocated (<see cref="ServerCounters.ControlAllocatedBytes"/>).</summary>
    public long AllocatedBytes { get; init; }
    /// <summary>Generation 0 collections so far.</summary>
    public int Gen0 { get; init; }
    /// <summary>Generation 1 collections so far.</summary>
    public int Gen1 { get; init; }
    /// <summary>Generation 2 collections so far.</summary>
    public int Gen2 { get; init; }
    /// <summary>Total GC pause time so far, in milliseconds.</summary>
    public double GcPauseMs { get; init; }
    /// <summary>The process's peak resident set (working set) so far, in bytes.</summary>
    public long PeakWorkingSetBytes { get; init; }

    /// <summary>Received requests not yet answered.</summary>
    public long InFlight => Received - Ok - Busy - Expired - Error - Unanswered;

    /// <summary>Takes a snapshot of <paramref name="counters"/> and this process.</summary>
    public static ServerStats Capture(string build, ServerCounters counters)
    {
        // The GC figures first: reading the process's figures allocates. That cost is a stats request's, not the
        // load's: CaptureJsonUtf8 measures it and later snapshots subtract it.
        long allocated = GC.GetTotalAllocatedBytes(precise: true) - counters.ControlAllocatedBytes;
        using var process = Process.GetCurrentProcess();
        return new ServerStats
        {
            Build = build,
            Received = counters.Received,
            Ok = counters.Ok,
            Busy = counters.Busy,
            Expired = counters.Expired,
            Error = counters.Error,
            Unanswered = counters.Unanswered,
            ShutdownBusy = counters.ShutdownBusy,
            MalformedStreams = counters.MalformedStreams,
            Truncated = counters.Truncated,
            Connections = counters.Connections,
            Refused = counters.Refused,
            AllocatedBytes = allocated,
            Gen0 = GC.CollectionCount(0),
            Gen1 = GC.CollectionCount(1),
            Gen2 = GC.CollectionCount(2),
            GcPauseMs = GC.GetTotalPauseDuration().TotalMilliseconds,
            PeakWorkingSetBytes = process.PeakWorkingSet64,
        };
    }

    /// <summary>
    /// The answer to a stats request: a snapshot as UTF-8 JSON. What taking and serializing it allocates (on this
    /// thread) is added to <see cref="ServerCounters.ControlAllocatedBytes"/>, so a phase bracketed by two stats
    /// requests reports the load's allocation alone (the first snapshot's own cost would otherwise fall into it).
    /// </summary>
    public static byte[] CaptureJsonUtf8(string build, ServerCounters counters)
    {
        long start = GC.GetAllocatedBytesForCurrentThread();
        byte[] json = Capture(build, counters).ToJsonUtf8();
        counters.CountControlAllocation(GC.GetAllocatedBytesForCurrentThread() - start);
        return json;
    }

    /// <summary>UTF-8 JSON of this snapshot.</summary>
    public byte[] ToJsonUtf8() => JsonSerializer.SerializeToUtf8Bytes(this, ServerJson.Default.ServerStats);

    /// <summary>Reads a snapshot from UTF-8 JSON.</summary>
    /// <exception cref="InvalidDataException">Not a snapshot.</exception>
    public static ServerStats FromJsonUtf8(ReadOnlySpan<byte> json)
        => JsonSerializer.Deserialize(json, ServerJson.Default.ServerStats) ?? throw new InvalidDataException("The stats answer was empty.");
}
