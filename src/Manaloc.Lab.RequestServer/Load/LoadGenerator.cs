using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using HdrHistogram;
using Manaloc.Lab.RequestServer.Protocol;
using Manaloc.Lab.RequestServer.Servers;

namespace Manaloc.Lab.RequestServer.Load;

/// <summary>
/// Runs a load against a server on 127.0.0.1: polite clients on a fixed open-loop schedule (one sender
/// thread for all, latency measured from each request's intended send time, so a stalled server cannot
/// hide its stall by slowing the sender: coordinated omission is corrected) and pipelined clients that
/// send as fast as their window allows (one thread each). Stops by itself: sending ends after
/// <see cref="LoadOptions.Duration"/>, answers are awaited for at most <see cref="LoadOptions.DrainTimeout"/>,
/// and whatever is still unanswered then is counted lost.
/// </summary>
public static class LoadGenerator
{
    /// <summary>Runs one load; blocks until it is over.</summary>
    /// <exception cref="ArgumentException">The options are out of range or the target is not loopback.</exception>
    /// <exception cref="SocketException">A client could not connect.</exception>
    public static LoadResult Run(LoadOptions options, CancellationToken cancellation = default)
    {
        options.Validate();
        long expectedCompute = RequestHandler.Compute(options.ComputeIterations);
        long expectedRecords = RequestHandler.ExpectedRecordChecksum(options.RecordCount);
        var polite = new List<LoadClient>();
        var pipelined = new List<LoadClient>();
        try
        {
            for (int i = 0; i < options.PoliteClients; i++) polite.Add(new LoadClient(options, true, expectedCompute, expectedRecords));
            for (int i = 0; i < options.PipelinedClients; i++) pipelined.Add(new LoadClient(options, false, expectedCompute, expectedRecords));
            foreach (var c in polite.Concat(pipelined)) c.StartReceiving();
            options.OnConnected?.Invoke();

            var sendLag = new LongHistogram(1, 60_000_000, 3);
            long start = Stopwatch.GetTimestamp();
            long end = start + (long)(options.Duration.TotalSeconds * Stopwatch.Frequency);
            var threads = new List<Thread>();
            if (polite.Count > 0) threads.Add(new Thread(() => SendPolite(polite, options.PoliteRate, start, end, sendLag, cancellation)) { IsBackground = true, Name = "load: polite" });
            foreach (var c in pipelined) threads.Add(new Thread(() => SendPipelined(c, end, cancellation)) { IsBackground = true, Name = "load: pipelined" });
            foreach (var t in threads) t.Start();
            foreach (var t in threads) t.Join();
            var sendingTime = Stopwatch.GetElapsedTime(start);

            long drainUntil = Stopwatch.GetTimestamp() + (long)(options.DrainTimeout.TotalSeconds * Stopwatch.Frequency);
            var all = polite.Concat(pipelined).ToArray();
            while (all.Any(c => c.Outstanding > 0) && Stopwatch.GetTimestamp() < drainUntil && !cancellation.IsCancellationRequested)
            {
                Thread.Sleep(1);
            }
            var elapsed = Stopwatch.GetElapsedTime(start);
            foreach (var c in all) c.FinishSending();
            // The server answers what it read and closes; a receive loop still open after a grace is closed by Dispose.
            Task.WhenAll(all.Select(c => c.Receiving)).Wait(TimeSpan.FromSeconds(2), CancellationToken.None);
            foreach (var c in all) c.Dispose();
            Task.WhenAll(all.Select(c => c.Receiving)).Wait(TimeSpan.FromSeconds(2), CancellationToken.None);

            return new LoadResult
            {
                Polite = Sum(polite),
                Pipelined = Sum(pipelined),
                PoliteLatency = Merge(polite),
                PipelinedLatency = Merge(pipelined),
                SendLag = LatencySummary.From(sendLag),
                Violations = all.Sum(c => c.Violations),
                SendingTime = sendingTime,
                Elapsed = elapsed,
            };
        }
        finally
        {
            foreach (var c in polite.Concat(pipelined)) c.Dispose();
        }
    }

    /// <summary>Asks a server for its <see cref="ServerStats"/> over a connection of its own.</summary>
    /// <exception cref="InvalidDataException">The answer was not a stats snapshot.</exception>
    public static async Task<ServerStats> QueryStatsAsync(IPEndPoint server, CancellationToken cancellation = default)
    {
        using var client = await StatsClient.ConnectAsync(server, cancellation).ConfigureAwait(false);
        return await client.QueryAsync(cancellation).ConfigureAwait(false);
    }

    private static void SendPolite(List<LoadClient> clients, double ratePerClient, long start, long end, LongHistogram sendLag, CancellationToken cancellation)
    {
        // The schedule: send g is due at start + g / (clients × rate), to client g mod clients.
        double interval = Stopwatch.Frequency / (ratePerClient * clients.Count);
        for (long g = 0; !cancellation.IsCancellationRequested; g++)
        {
            long intended = start + (long)(g * interval);
            if (intended >= end) return;
            long now;
            if (!clients.Any(c => c.CanSend)) return;
            while ((now = Stopwatch.GetTimestamp()) < intended)
            {
                // Sleeping, not spinning: on a small machine a spinning generator takes a core from the server.
                // The lateness this costs (timer granularity, ~1 ms) is recorded as the send lag and is part of every latency.
                Thread.Sleep(1);
            }
            var client = clients[(int)(g % clients.Count)];
            if (!client.CanSend) continue;
            sendLag.RecordValue(Math.Max(1, (now - intended) * 1_000_000 / Stopwatch.Frequency));
            client.Send(1, intended);
        }
    }

    private static void SendPipelined(LoadClient client, long end, CancellationToken cancellation)
    {
        var window = client.Window!;
        while (Stopwatch.GetTimestamp() < end && client.CanSend && !cancellation.IsCancellationRequested)
        {
            if (!window.Wait(10, CancellationToken.None)) continue;
            int batch = 1;
            while (batch < 64 && window.Wait(0)) batch++;
            int sent = client.Send(batch, 0);
            if (sent < batch) window.Release(batch - sent);
        }
    }

    private static Tally Sum(List<LoadClient> clients)
        => clients.Select(c => c.Tally()).Aggregate(new Tally(0, 0, 0, 0, 0, 0), (a, b) => a + b);

    private static LatencySummary Merge(List<LoadClient> clients)
    {
        if (clients.Count == 0) return LatencySummary.Empty;
        var merged = new LongHistogram(1, 60_000_000, 3);
        foreach (var c in clients) merged.Add(c.Latency);
        return LatencySummary.From(merged);
    }
}
