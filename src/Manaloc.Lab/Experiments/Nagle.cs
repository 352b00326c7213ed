using System.Net;
using System.Net.Sockets;

namespace Manaloc.Lab.Experiments;

/// <summary>
/// Seed 000, "The Case of Delayed ACKs and Nagle's Algorithm": a client that sends two small
/// messages and then waits for a reply stalls, because Nagle's algorithm holds the second message
/// until the first is acknowledged and the server delays that acknowledgement, hoping to piggyback
/// it on a reply it cannot send before the second message arrives (about 200 ms on Windows). Here:
/// the round-trip latency over 127.0.0.1 with the client's NoDelay off, on, and off with the two
/// messages sent in one write.
/// </summary>
/// <remarks>
/// Each variant uses a fresh listener and connection bound to 127.0.0.1 only. Every receive has a
/// timeout, every loop a round count and a time budget, and every socket is closed in a finally
/// block even when a round fails; <see cref="SocketsOpen"/> lets tests check that.
/// </remarks>
public sealed class Nagle() : Experiment(
    "nagle", "The Case of Delayed ACKs and Nagle's Algorithm (seed 000)",
    "Two 8-byte sends then a 1-byte reply over 127.0.0.1: round-trip latency with NoDelay off and on.",
    [Off, On, OneWrite], On, quickSeconds: 3.5, quickLaunches: 2)
{
    private const string Off = "NoDelay off";
    private const string On = "NoDelay on";
    private const string OneWrite = "NoDelay off, one write";
    private const int MessageBytes = 8;
    private static readonly TimeSpan IoTimeout = TimeSpan.FromSeconds(3);

    private readonly SocketTracker _sockets = new();

    /// <summary>Sockets this instance has opened so far.</summary>
    internal int SocketsOpened => _sockets.Opened;

    /// <summary>Sockets this instance has opened and not yet closed (0 after a run).</summary>
    internal int SocketsOpen => _sockets.Open;

    /// <summary>The port the last listener was bound to (closed after the run).</summary>
    internal int LastPort { get; private set; }

    /// <inheritdoc/>
    public override Claim Claim => new("Two small sends then a wait for the reply: about 200 ms per round on Windows (Nagle + delayed ACK); NoDelay removes it", 200,
        Metric.Median("time per round with NoDelay off (two writes, then the reply)", Off, Unit.Milliseconds));
    /// <inheritdoc/>
    public override IReadOnlyList<Target> Targets =>
        [Target.AtLeast(Metric.TimesBetter("NoDelay on vs off, time per round", On, Off), 10)];
    /// <inheritdoc/>
    /// <remarks>No Manaloc path: the choice is the socket option.</remarks>
    public override Headline Headline => new(
        Metric.TimesBetter("no Manaloc path: NoDelay on vs off, two small writes then the reply (times as fast)", On, Off),
        Metric.TimesBetter("one write with NoDelay off vs two", OneWrite, Off));

    /// <inheritdoc/>
    public override IReadOnlyList<ParameterSpec> DescribeParameters(RunSettings settings)
    {
        var (off, on) = Rounds(settings);
        return [new("rounds", $"request/reply rounds: {off} with NoDelay off (each may stall), {on} otherwise", [off.ToString(System.Globalization.CultureInfo.InvariantCulture), on.ToString(System.Globalization.CultureInfo.InvariantCulture)])];
    }

    private static (int Off, int On) Rounds(RunSettings settings)
        => settings.IsSmoke ? (4, 20) : settings.IsQuick ? (20, 1000) : (250, 20_000);

    /// <inheritdoc/>
    public override void Run(ExperimentContext context)
    {
        var (offRounds, onRounds) = Rounds(context.Settings);
        // The NoDelay-off variant stalls by design; its budget bounds the run when every round stalls for long.
        var offBudget = TimeSpan.FromSeconds(context.IsSmoke ? 1.5 : context.IsQuick ? 3 : 20);
        var budget = TimeSpan.FromSeconds(context.IsSmoke ? 1 : context.IsQuick ? 2 : 10);
        var parameters = Parameters.Of(("message", $"2x{MessageBytes} B"));
        foreach (var (variant, noDelay, twoWrites, rounds, limit) in new[]
        {
            (On, true, true, onRounds, budget),
            (Off, false, true, offRounds, offBudget),
            (OneWrite, false, false, onRounds, budget),
        })
        {
            context.Status(variant);
            context.Cancellation.ThrowIfCancellationRequested();
            var samples = RunRounds(noDelay, twoWrites, rounds, limit);
            int stalls = samples.Count(ms => ms >= 10);
            context.RecordSamples(variant, "ms", samples, parameters, metrics: new Dictionary<string, double>
            {
                ["rounds"] = samples.Count,
                ["stalls"] = stalls,
            });
            if (samples.Count < rounds)
            {
                context.Note($"{variant}: stopped after {samples.Count} of {Format.Count(rounds, "round")} (time budget {limit.TotalSeconds:0.#} s).");
            }
            context.Note($"{variant}: {stalls} of {Format.Count(samples.Count, "round")} took 10 ms or more.");
        }
        context.Note("Linux delays an ACK by at least 40 ms (TCP_DELACK_MIN) once a connection leaves quick-ACK mode; the first rounds of a connection are acknowledged at once.");
    }

    /// <summary>Runs <paramref name="rounds"/> request/reply rounds on a fresh connection; returns each round's milliseconds.</summary>
    internal List<double> RunRounds(bool noDelay, bool twoWrites, int rounds, TimeSpan budget)
    {
        var samples = new List<double>(rounds);
        var sockets = _sockets.StartRun();
        Thread? server = null;
        Exception? serverError = null;
        try
        {
            var listener = sockets.Open(SocketType.Stream, ProtocolType.Tcp);
            listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            listener.Listen(1);
            var endPoint = (IPEndPoint)listener.LocalEndPoint!;
            LastPort = endPoint.Port;
            server = new Thread(() =>
            {
                try
                {
                    Serve(listener, sockets);
                }
                catch (Exception e) when (e is SocketException or ObjectDisposedException)
                {
                    serverError = e;
                }
            })
            { IsBackground = true, Name = "nagle-server" };
            server.Start();

            var client = sockets.Open(SocketType.Stream, ProtocolType.Tcp);
            client.NoDelay = noDelay;
            client.ReceiveTimeout = client.SendTimeout = (int)IoTimeout.TotalMilliseconds;
            client.Connect(endPoint);
            byte[] first = new byte[MessageBytes], second = new byte[MessageBytes], both = new byte[2 * MessageBytes], reply = new byte[1];
            var spending = LabClock.Budget(budget);
            for (int i = 0; i < rounds && !spending.IsSpent; i++)
            {
                long start = LabClock.Now;
                if (twoWrites)
                {
                    client.Send(first);
                    client.Send(second);
                }
                else
                {
                    client.Send(both);
                }
                if (client.Receive(reply) != 1)
                {
                    throw new InvalidOperationException($"The server closed the connection after {Format.Count(i, "round")}{(serverError is null ? "" : $": {serverError.Message}")}.");
                }
                samples.Add(LabClock.Since(start).TotalMilliseconds);
            }
            client.Shutdown(SocketShutdown.Send);
        }
        finally
        {
            sockets.CloseAll();
            if (server is not null && !server.Join(IoTimeout + IoTimeout))
            {
                // Closing its sockets above ends the server's blocking calls; this would be a bug.
                throw new InvalidOperationException("The server thread did not stop after its sockets were closed.");
            }
        }
        return samples;
    }

    // The loopback client and server, and the sockets they opened.
    /// <summary>Accepts one connection (within the I/O timeout) and answers every 16 bytes with 1 byte until the client shuts down.</summary>
    private static void Serve(Socket listener, SocketTracker.Run sockets)
    {
        if (!listener.Poll(IoTimeout, SelectMode.SelectRead))
        {
            return;
        }
        Socket connection = listener.Accept();
        sockets.Track(connection);
        connection.ReceiveTimeout = connection.SendTimeout = (int)IoTimeout.TotalMilliseconds;
        byte[] request = new byte[2 * MessageBytes], reply = [1];
        while (true)
        {
            int received = 0;
            while (received < request.Length)
            {
                int n = connection.Receive(request, received, request.Length - received, SocketFlags.None);
                if (n == 0) return;
                received += n;
            }
            connection.Send(reply);
        }
    }
}
