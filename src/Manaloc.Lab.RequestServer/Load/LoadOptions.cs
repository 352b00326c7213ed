using System.Net;

namespace Manaloc.Lab.RequestServer.Load;

/// <summary>
/// One load run: polite clients at a fixed open-loop rate and pipelined clients (a flood, or a saturating
/// load) keeping a window of requests outstanding. Bounded in time (<see cref="Duration"/> plus
/// <see cref="DrainTimeout"/>) and in count (<see cref="MaxPipelinedRequests"/> per pipelined client).
/// </summary>
public sealed record LoadOptions
{
    /// <summary>The server; must be a loopback address.</summary>
    public required IPEndPoint Target { get; init; }
    /// <summary>Polite clients, one connection each.</summary>
    public int PoliteClients { get; init; } = 8;
    /// <summary>Requests per second each polite client sends, on a fixed schedule whatever the answers.</summary>
    public double PoliteRate { get; init; } = 250;
    /// <summary>Pipelined clients, one connection each, sending as fast as their window allows (compute requests).</summary>
    public int PipelinedClients { get; init; }
    /// <summary>Requests a pipelined client keeps outstanding at most.</summary>
    public int PipelineWindow { get; init; } = 4096;
    /// <summary>Most requests one pipelined client sends.</summary>
    public int MaxPipelinedRequests { get; init; } = 1_000_000;
    /// <summary>How long clients send.</summary>
    public TimeSpan Duration { get; init; } = TimeSpan.FromSeconds(2);
    /// <summary>How long to wait for outstanding answers after sending stops; what is still missing then is lost.</summary>
    public TimeSpan DrainTimeout { get; init; } = TimeSpan.FromSeconds(10);
    /// <summary>Deadline budget of every request, in microseconds (0 = none).</summary>
    public int DeadlineMicros { get; init; } = 100_000;
    /// <summary>Iterations of a compute request (about a nanosecond each).</summary>
    public int ComputeIterations { get; init; } = 20_000;
    /// <summary>Records of a records request.</summary>
    public int RecordCount { get; init; } = 64;
    /// <summary>Payload bytes of an echo request.</summary>
    public int EchoBytes { get; init; } = 64;
    /// <summary>Called once every client has connected, before the first send (to snapshot the server without the cost of connecting).</summary>
    public Action? OnConnected { get; init; }

    /// <summary>Throws when a value is out of range or the target is not loopback.</summary>
    /// <exception cref="ArgumentException">What is wrong.</exception>
    public void Validate()
    {
        LoopbackSocket.EnsureLoopback(Target, nameof(Target));
        if (PoliteClients < 0 || PipelinedClients < 0 || PoliteClients + PipelinedClients == 0) throw new ArgumentException("At least one client, and no negative counts.", nameof(PoliteClients));
        if (PoliteClients > 0 && !(PoliteRate is > 0 and <= 100_000)) throw new ArgumentException("The polite rate must be in (0, 100000] per second.", nameof(PoliteRate));
        if (PipelineWindow < 1 || MaxPipelinedRequests < 1) throw new ArgumentException("Pipeline window and request cap must be at least 1.", nameof(PipelineWindow));
        if (Duration <= TimeSpan.Zero || Duration > TimeSpan.FromMinutes(10)) throw new ArgumentException("The duration must be in (0, 10 min].", nameof(Duration));
        if (DrainTimeout < TimeSpan.Zero || DrainTimeout > TimeSpan.FromMinutes(5)) throw new ArgumentException("The drain timeout must be in [0, 5 min].", nameof(DrainTimeout));
        if (DeadlineMicros < 0) throw new ArgumentException("The deadline must not be negative.", nameof(DeadlineMicros));
        if (ComputeIterations is < 0 or > Protocol.RequestHandler.MaxComputeIterations) throw new ArgumentException("Compute iterations out of range.", nameof(ComputeIterations));
        if (RecordCount is < 1 or > Protocol.RequestHandler.MaxRecords) throw new ArgumentException("Record count out of range.", nameof(RecordCount));
        if (EchoBytes is < 0 or > Protocol.Frame.MaxPayload) throw new ArgumentException("Echo payload out of range.", nameof(EchoBytes));
    }

    /// <summary>Most requests one polite client sends: its share of the schedule, plus one.</summary>
    internal int MaxPoliteRequests => (int)Math.Min(int.MaxValue / 2, Math.Ceiling(PoliteRate * Duration.TotalSeconds) + 1);
}

/// <summary>Requests of one kind of client, every one accounted for: <c>Sent = Ok + Busy + Expired + Error + Lost</c>.</summary>
public sealed record Tally(long Sent, long Ok, long Busy, long Expired, long Error, long Lost)
{
    /// <summary>Answers received.</summary>
    public long Answered => Ok + Busy + Expired + Error;
    /// <summary>True when the identity holds.</summary>
    public bool Balances => Sent == Answered + Lost;
    /// <summary>The sum of two tallies.</summary>
    public static Tally operator +(Tally a, Tally b) => new(a.Sent + b.Sent, a.Ok + b.Ok, a.Busy + b.Busy, a.Expired + b.Expired, a.Error + b.Error, a.Lost + b.Lost);
    /// <inheritdoc/>
    public override string ToString() => $"sent {Sent} = ok {Ok} + busy {Busy} + expired {Expired} + error {Error} + lost {Lost}";
}

/// <summary>Latency percentiles in microseconds, from an HdrHistogram (3 significant digits).</summary>
public sealed record LatencySummary(long Count, double P50, double P90, double P99, double P999, double Max, double Mean)
{
    /// <summary>No samples.</summary>
    public static LatencySummary Empty { get; } = new(0, double.NaN, double.NaN, double.NaN, double.NaN, double.NaN, double.NaN);

    /// <summary>Summarises <paramref name="histogram"/> (values in microseconds).</summary>
    public static LatencySummary From(HdrHistogram.HistogramBase histogram)
        => histogram.TotalCount == 0 ? Empty : new(
            histogram.TotalCount,
            histogram.GetValueAtPercentile(50), histogram.GetValueAtPercentile(90), histogram.GetValueAtPercentile(99),
            histogram.GetValueAtPercentile(99.9), HdrHistogram.HistogramExtensions.GetMaxValue(histogram), HdrHistogram.HistogramExtensions.GetMean(histogram));

    /// <inheritdoc/>
    public override string ToString() => Count == 0 ? "no samples" : $"p50 {P50:0} µs, p99 {P99:0} µs, p99.9 {P999:0} µs, max {Max:0} µs ({Count} samples)";
}

/// <summary>What a load run measured on the client side.</summary>
public sealed record LoadResult
{
    /// <summary>The polite clients' requests.</summary>
    public required Tally Polite { get; init; }
    /// <summary>The pipelined clients' requests.</summary>
    public required Tally Pipelined { get; init; }
    /// <summary>Polite latency from each request's intended send time to its answer (coordinated omission corrected).</summary>
    public required LatencySummary PoliteLatency { get; init; }
    /// <summary>Pipelined latency from send to answer.</summary>
    public required LatencySummary PipelinedLatency { get; init; }
    /// <summary>How late the polite sends left against their schedule (the generator's own timer granularity).</summary>
    public required LatencySummary SendLag { get; init; }
    /// <summary>Answers that broke the protocol: unknown or repeated ids, wrong checksums or echoes. Must be 0.</summary>
    public long Violations { get; init; }
    /// <summary>How long the clients sent.</summary>
    public TimeSpan SendingTime { get; init; }
    /// <summary>From the first send to the last answer (or the drain timeout).</summary>
    public TimeSpan Elapsed { get; init; }
    /// <summary>Every request.</summary>
    public Tally Total => Polite + Pipelined;
    /// <summary>Ok answers per second of sending time, all clients.</summary>
    public double OkPerSecond => Elapsed > TimeSpan.Zero ? Total.Ok / Elapsed.TotalSeconds : 0;
    /// <summary>The pipelined clients' share of the ok answers.</summary>
    public double PipelinedShare => Total.Ok == 0 ? 0 : (double)Pipelined.Ok / Total.Ok;
}
