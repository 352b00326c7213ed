using System.Net;

namespace Manaloc.Lab.Experiments;

/// <summary>The load of one phase, bounded in time and count.</summary>
/// <param name="PoliteClients">Polite clients, one keep-alive connection each.</param>
/// <param name="PoliteRate">Requests per second each polite client sends (open loop: on a fixed schedule, whatever the answers).</param>
/// <param name="FloodConnections">Connections of the one flooding client (0: no flood); each sends its next request as soon as the last is answered.</param>
/// <param name="SaturatingClients">Closed-loop clients, each its own client and connection (0: none).</param>
/// <param name="Duration">How long the phase sends.</param>
internal sealed record HttpPhaseLoad(int PoliteClients, int PoliteRate, int FloodConnections, int SaturatingClients, TimeSpan Duration);

/// <summary>What one group of clients got; every request sent is in exactly one of the outcome counts.</summary>
internal sealed class HttpTally
{
    public long Sent, Ok, TooMany, Unavailable, OtherStatus, Lost;
    public readonly List<double> LatencyMicros = [];

    public long Answered => Ok + TooMany + Unavailable + OtherStatus;

    public void Add(HttpTally other)
    {
        Sent += other.Sent; Ok += other.Ok; TooMany += other.TooMany; Unavailable += other.Unavailable;
        OtherStatus += other.OtherStatus; Lost += other.Lost;
        LatencyMicros.AddRange(other.LatencyMicros);
    }

    public void Count(int status)
    {
        if (status is >= 200 and < 300) Ok++;
        else if (status == 429) TooMany++;
        else if (status == 503) Unavailable++;
        else OtherStatus++;
    }
}

/// <summary>What a phase measured on the client side.</summary>
internal sealed record HttpLoadResult(HttpTally Polite, HttpTally Flooder, HttpTally Saturating, TimeSpan Elapsed, double SendLagP99Micros)
{
    public long Sent => Polite.Sent + Flooder.Sent + Saturating.Sent;
    public long Lost => Polite.Lost + Flooder.Lost + Saturating.Lost;
    public long Ok => Polite.Ok + Flooder.Ok + Saturating.Ok;
    public double OkPerSecond => Ok / Math.Max(Elapsed.TotalSeconds, 1e-9);

    /// <summary>Parts of one phase (its slices) as one: the tallies added, the times summed, the worst send lag.</summary>
    /// <exception cref="ArgumentException"><paramref name="parts"/> is empty.</exception>
    public static HttpLoadResult Combine(IReadOnlyList<HttpLoadResult> parts)
    {
        ArgumentNullException.ThrowIfNull(parts);
        if (parts.Count == 0) throw new ArgumentException("No parts to combine.", nameof(parts));
        HttpTally polite = new(), flooder = new(), saturating = new();
        foreach (var part in parts)
        {
            polite.Add(part.Polite);
            flooder.Add(part.Flooder);
            saturating.Add(part.Saturating);
        }
        return new HttpLoadResult(polite, flooder, saturating, TimeSpan.FromTicks(parts.Sum(p => p.Elapsed.Ticks)), parts.Max(p => p.SendLagP99Micros));
    }
}

/// <summary>
/// A bounded HTTP/1.1 keep-alive load generator for 127.0.0.1: polite clients on a fixed schedule (latency from
/// the intended send time, so a slow answer delays the next send and that delay is counted: no coordinated
/// omission), one flooding client, closed-loop saturating clients. It stops by itself at the phase's end
/// (a request in flight then gets a grace period, after which it is counted lost), and every request sent is
/// counted as answered (by status) or lost.
/// </summary>
internal static class HttpLoad
{
    /// <summary>The CPU-bound request's argument: primes up to this (about a millisecond of work).</summary>
    public const int PrimeLimit = 20_000;

    private const long MaxRequestsPerClient = 1_000_000;
    private static readonly TimeSpan RequestTimeout = TimeSpan.FromSeconds(10);

    private static readonly string Order = """{"id":42,"customer":"c-17","lines":[{"sku":"A-1","quantity":2,"unitPrice":9.5},{"sku":"B-2","quantity":1,"unitPrice":120},{"sku":"C-3","quantity":7,"unitPrice":0.25},{"sku":"D-4","quantity":3,"unitPrice":14}]}""";

    /// <summary>A client's requests, alternated: an order (JSON) and a CPU-bound request.</summary>
    private static byte[][] Mixed(string client) =>
    [
        HttpConnection.Encode("POST", "/api/orders", client, Order),
        HttpConnection.Encode("GET", $"/api/primes/{PrimeLimit}", client),
    ];

    public static async Task<HttpLoadResult> RunAsync(IPEndPoint endpoint, HttpPhaseLoad load, CancellationToken cancellation)
    {
        var polite = Enumerable.Range(0, load.PoliteClients).Select(_ => new HttpTally()).ToArray();
        var lags = Enumerable.Range(0, load.PoliteClients).Select(_ => new List<double>()).ToArray();
        var flooder = Enumerable.Range(0, load.FloodConnections).Select(_ => new HttpTally()).ToArray();
        var saturating = Enumerable.Range(0, load.SaturatingClients).Select(_ => new HttpTally()).ToArray();
        long begin = LabClock.Now;
        long deadline = begin + (long)(load.Duration.TotalSeconds * LabClock.Frequency);
        var tasks = new List<Task>();
        for (int i = 0; i < load.PoliteClients; i++)
        {
            int index = i;
            tasks.Add(Task.Run(() => PoliteAsync(endpoint, Mixed($"polite-{index}"), load.PoliteRate, begin, index, load.PoliteClients, deadline, polite[index], lags[index], cancellation)));
        }
        var flood = HttpConnection.Encode("GET", $"/api/primes/{PrimeLimit}", "flooder");
        for (int i = 0; i < load.FloodConnections; i++)
        {
            int index = i;
            tasks.Add(Task.Run(() => ClosedLoopAsync(endpoint, [flood], deadline, flooder[index], cancellation)));
        }
        for (int i = 0; i < load.SaturatingClients; i++)
        {
            int index = i;
            tasks.Add(Task.Run(() => ClosedLoopAsync(endpoint, Mixed($"saturating-{index}"), deadline, saturating[index], cancellation)));
        }
        await Task.WhenAll(tasks).ConfigureAwait(false);
        var elapsed = LabClock.Since(begin);
        var allLags = lags.SelectMany(l => l).Order().ToArray();
        double lagP99 = allLags.Length == 0 ? 0 : allLags[Math.Min(allLags.Length - 1, (int)(allLags.Length * 0.99))];
        return new HttpLoadResult(Sum(polite), Sum(flooder), Sum(saturating), elapsed, lagP99);
    }

    private static HttpTally Sum(IEnumerable<HttpTally> tallies)
    {
        var total = new HttpTally();
        foreach (var t in tallies) total.Add(t);
        return total;
    }

    /// <summary>Sends on a fixed schedule (staggered between clients) until the deadline; latency from each intended send time.</summary>
    private static async Task PoliteAsync(IPEndPoint endpoint, byte[][] requests, int rate, long begin, int index, int clients, long deadline,
        HttpTally tally, List<double> lags, CancellationToken cancellation)
    {
        long interval = LabClock.Frequency / Math.Max(1, rate);
        long start = begin + interval * index / Math.Max(1, clients);
        HttpConnection? connection = null;
        try
        {
            for (long i = 0; i < MaxRequestsPerClient; i++)
            {
                long intended = start + i * interval;
                if (intended >= deadline) break;
                long wait = intended - LabClock.Now;
                if (wait > LabClock.Frequency / 1000) await Task.Delay(TimeSpan.FromSeconds((double)wait / LabClock.Frequency), cancellation).ConfigureAwait(false);
                long sent = LabClock.Now;
                lags.Add(Math.Max(0, sent - intended) * 1e6 / LabClock.Frequency);
                (connection, int? status) = await SendOneAsync(endpoint, connection, requests[i % requests.Length], tally, cancellation).ConfigureAwait(false);
                if (status is >= 200 and < 300) tally.LatencyMicros.Add((LabClock.Now - intended) * 1e6 / LabClock.Frequency);
            }
        }
        finally
        {
            connection?.Dispose();
        }
    }

    /// <summary>Sends the next request as soon as the last one is answered, until the deadline.</summary>
    private static async Task ClosedLoopAsync(IPEndPoint endpoint, byte[][] requests, long deadline, HttpTally tally, CancellationToken cancellation)
    {
        HttpConnection? connection = null;
        try
        {
            for (long i = 0; i < MaxRequestsPerClient && LabClock.Now < deadline; i++)
            {
                (connection, _) = await SendOneAsync(endpoint, connection, requests[i % requests.Length], tally, cancellation).ConfigureAwait(false);
            }
        }
        finally
        {
            connection?.Dispose();
        }
    }

    /// <summary>One request on the connection (opened if needed); a failure counts the request lost and drops the connection.</summary>
    private static async Task<(HttpConnection?, int?)> SendOneAsync(IPEndPoint endpoint, HttpConnection? connection, byte[] request, HttpTally tally, CancellationToken cancellation)
    {
        tally.Sent++;
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellation);
        timeout.CancelAfter(RequestTimeout);
        try
        {
            connection ??= await HttpConnection.ConnectAsync(endpoint, timeout.Token).ConfigureAwait(false);
            int status = await connection.SendAsync(request, timeout.Token).ConfigureAwait(false);
            tally.Count(status);
            return (connection, status);
        }
        catch (Exception) when (!cancellation.IsCancellationRequested) // refused, reset, closed or timed out: lost, and a new connection next time
        {
            tally.Lost++;
            connection?.Dispose();
            return (null, null);
        }
    }
}
