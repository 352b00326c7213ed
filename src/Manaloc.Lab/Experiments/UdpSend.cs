using System.Net;
using System.Net.Sockets;

namespace Manaloc.Lab.Experiments;

/// <summary>
/// Seed 002, "Tradeoffs in High Performance Software": 100,000 StatsD datagrams took 2.7 s with
/// UdpClient.BeginSend and 1.6 s with Send. Here: small datagrams to a receiver on 127.0.0.1 with
/// Socket.SendTo (with an EndPoint, and with a SocketAddress serialized once), Send on a connected socket (the article's UdpClient.Send), SendToAsync awaited one
/// at a time, SendToAsync with a window of outstanding sends, and BeginSendTo/EndSendTo; datagrams
/// per second, and how many the receiver counted.
/// </summary>
/// <remarks>
/// UDP on loopback drops what the receiver's buffer cannot hold, so a fast sender loses datagrams:
/// the receiver counts every one and the loss is reported beside the rate, never hidden. Each
/// variant gets its own receiver and sender sockets, bound to 127.0.0.1 only, closed in a finally
/// block; the receiver polls with a timeout, and waiting for stragglers is bounded.
/// </remarks>
public sealed class UdpSend() : Experiment(
    "udp-send", "Tradeoffs in High Performance Software (seed 002)",
    "Small UDP datagrams to 127.0.0.1: SendTo vs SendToAsync vs BeginSendTo, datagrams/s and how many arrived.",
    [Sync, SyncAddress, Connected, Awaited, Windowed, Apm], Apm, quickSeconds: 3.5, quickLaunches: 2)
{
    private const string Sync = "SendTo";
    private const string Connected = "Send (connected)";
    private const string SyncAddress = "SendTo (SocketAddress)";
    private const string Awaited = "SendToAsync awaited";
    private const string Windowed = "SendToAsync window=64";
    private const string Apm = "BeginSendTo/EndSendTo";
    private const int Window = 64;
    private static readonly byte[] Payload = "manaloc.lab.udp-send.counter:1|c"u8.ToArray();
    private static readonly ReadOnlyMemory<byte> PayloadMemory = Payload;

    private readonly SocketTracker _sockets = new();

    /// <summary>Sockets this instance has opened so far.</summary>
    internal int SocketsOpened => _sockets.Opened;

    /// <summary>Sockets this instance has opened and not yet closed (0 after a run).</summary>
    internal int SocketsOpen => _sockets.Open;

    /// <summary>The port the last receiver was bound to (closed after the run).</summary>
    internal int LastPort { get; private set; }

    /// <inheritdoc/>
    public override Claim Claim => new("100,000 datagrams: 2.7 s with BeginSend, 1.6 s with Send (1.69x faster)", 2.7 / 1.6,
        Metric.TimesBetter("SendTo vs BeginSendTo/EndSendTo, time per datagram", Sync, Apm));
    /// <inheritdoc/>
    /// <remarks>No Manaloc path: the choice is the socket call.</remarks>
    public override Headline Headline => new(
        Metric.TimesBetter("no Manaloc path: SendTo vs BeginSendTo/EndSendTo, time per datagram (times as fast)", Sync, Apm),
        Metric.TimesBetter("SendToAsync awaited vs BeginSendTo/EndSendTo", Awaited, Apm));

    /// <inheritdoc/>
    public override IReadOnlyList<ParameterSpec> DescribeParameters(RunSettings settings) =>
    [
        new("datagrams", "datagrams per batch (one sample)", [Datagrams(settings).ToString(CultureInfo.InvariantCulture)]),
        new("bytes", "payload of each datagram", [Payload.Length.ToString(CultureInfo.InvariantCulture)]),
    ];

    private static int Datagrams(RunSettings settings) => settings.IsSmoke ? 2_000 : settings.IsQuick ? 10_000 : 100_000;

    private static int Rounds(RunSettings settings) => settings.IsSmoke ? 1 : settings.IsQuick ? 3 : 5;

    /// <inheritdoc/>
    public override void Run(ExperimentContext context)
    {
        int datagrams = Datagrams(context.Settings);
        var parameters = Parameters.Of(("datagrams", datagrams), ("bytes", Payload.Length));
        var (results, receiveBuffer, roundsRun) = RunAll(context, datagrams, Rounds(context.Settings));
        foreach (string variant in Variants)
        {
            var result = results[variant];
            long lost = result.Sent - result.Received;
            double lossPercent = result.Sent == 0 ? 0 : 100.0 * lost / result.Sent;
            double bytesPer = result.Sent == 0 ? 0 : (double)result.Allocated / result.Sent;
            context.RecordSamples(variant, "datagrams/s", result.Rates, parameters, lowerIsBetter: false, metrics: new Dictionary<string, double>
            {
                ["sent"] = result.Sent,
                ["received"] = result.Received,
                ["lost"] = lost,
                ["lossPercent"] = lossPercent,
                ["secondsPer100k"] = 100_000 / Statistics.From(result.Rates).Median,
                ["allocatedBytesPerDatagram"] = bytesPer,
            });
            context.Note($"{variant}: sent {result.Sent:N0}, received {result.Received:N0} ({lossPercent:0.#} % lost), {bytesPer:0.#} B allocated per datagram (process-wide).");
        }
        context.Note($"{Format.Count(roundsRun, "round")} of {Format.Count(datagrams, "datagram", format: "N0")} per variant, variants interleaved within each round so machine noise spreads over all of them; receiver buffer {Format.Count(receiveBuffer, "byte", format: "N0")} as granted by the kernel.");
        context.Note("Loopback drops datagrams the receiver cannot keep up with without slowing the sender: the received counts are the receiver's own.");
        context.Note("The article measured UdpClient.BeginSend vs Send to a VM on Windows 7 / .NET 4; here the socket APIs are called directly over loopback.");
    }

    private sealed class VariantResult
    {
        public List<double> Rates { get; } = [];
        public long Sent { get; set; }
        public long Received { get; set; }
        public long Allocated { get; set; }
    }

    /// <summary>
    /// One receiver, one unconnected and one connected sender; each round sends <paramref name="datagrams"/>
    /// with every variant in turn, and the receiver counts what arrives after each batch.
    /// </summary>
    private (Dictionary<string, VariantResult> Results, int ReceiveBuffer, int Rounds) RunAll(ExperimentContext context, int datagrams, int rounds)
    {
        var results = Variants.ToDictionary(v => v, _ => new VariantResult());
        var sockets = _sockets.StartRun();
        Thread? receiverThread = null;
        var receiver = new ReceiverState();
        try
        {
            var listen = sockets.Open(SocketType.Dgram, ProtocolType.Udp);
            listen.ReceiveBufferSize = 4 << 20;
            listen.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            listen.ReceiveTimeout = 50;
            var target = (IPEndPoint)listen.LocalEndPoint!;
            LastPort = target.Port;
            receiverThread = new Thread(() => Receive(listen, receiver)) { IsBackground = true, Name = "udp-receiver" };
            receiverThread.Start();

            var unconnected = sockets.Open(SocketType.Dgram, ProtocolType.Udp);
            unconnected.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            var connected = sockets.Open(SocketType.Dgram, ProtocolType.Udp);
            connected.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            connected.Connect(target);

            // The harness warms each variant up (the JIT and the socket's state: a short batch, drained, not counted) and runs the
            // batches in rounds, variants interleaved, accounting each batch's allocation. The send's own time is the measured
            // quantity (the drain after it waits for the receiver, which the sender's API does not change).
            var runs = Scenarios.Run(context,
            [
                .. Variants.Select(variant => (variant, (Func<int, (double SendSeconds, long Received)>)(n =>
                {
                    long before = Volatile.Read(ref receiver.Count);
                    double seconds = LabClock.Time(() => Send(variant, variant == Connected ? connected : unconnected, target, n)).TotalSeconds;
                    return (seconds, Drain(receiver, before, n));
                }))),
            ], datagrams, warmUpSize: Math.Min(1_000, datagrams), rounds: rounds);
            foreach (var (variant, taken) in runs)
            {
                var result = results[variant];
                foreach (var run in taken)
                {
                    result.Rates.Add(datagrams / run.Result.SendSeconds);
                    result.Allocated += run.AllocatedBytes;
                    result.Sent += datagrams;
                    result.Received += run.Result.Received;
                }
            }
            return (results, listen.ReceiveBufferSize, rounds);
        }
        finally
        {
            Volatile.Write(ref receiver.Stop, true); // seen by the receiver at its next poll timeout
            sockets.CloseAll();
            if (receiverThread is not null && !receiverThread.Join(TimeSpan.FromSeconds(5)))
            {
                throw new InvalidOperationException("The receiver thread did not stop after its socket was closed.");
            }
        }
    }

    // The send loops per API, the receiver that counts what arrived, and the sockets opened.
    private static void Send(string variant, Socket sender, EndPoint target, int datagrams)
    {
        switch (variant)
        {
            case Sync:
                for (int i = 0; i < datagrams; i++) sender.SendTo(Payload, SocketFlags.None, target);
                break;
            case SyncAddress:
                // .NET 8+: the address is serialized once, not on every call as with an EndPoint.
                var address = target.Serialize();
                for (int i = 0; i < datagrams; i++) sender.SendTo(Payload, SocketFlags.None, address);
                break;
            case Connected:
                for (int i = 0; i < datagrams; i++) sender.Send(Payload);
                break;
            case Awaited:
                SendAwaitedAsync(sender, target, datagrams).GetAwaiter().GetResult();
                break;
            case Windowed:
                SendWindowedAsync(sender, target, datagrams).GetAwaiter().GetResult();
                break;
            case Apm:
                SendApm(sender, target, datagrams);
                break;
            default:
                throw new ArgumentOutOfRangeException(nameof(variant), variant, "Unknown variant.");
        }
    }

    private static async Task SendAwaitedAsync(Socket sender, EndPoint target, int datagrams)
    {
        for (int i = 0; i < datagrams; i++)
        {
            await sender.SendToAsync(PayloadMemory, SocketFlags.None, target, CancellationToken.None).ConfigureAwait(false);
        }
    }

    private static async Task SendWindowedAsync(Socket sender, EndPoint target, int datagrams)
    {
        var pending = new Queue<Task<int>>(Window);
        for (int i = 0; i < datagrams; i++)
        {
            if (pending.Count == Window) await pending.Dequeue().ConfigureAwait(false);
            var send = sender.SendToAsync(PayloadMemory, SocketFlags.None, target, CancellationToken.None);
            // A send that completed synchronously needs no slot in the window.
            if (!send.IsCompletedSuccessfully) pending.Enqueue(send.AsTask());
        }
        while (pending.Count > 0) await pending.Dequeue().ConfigureAwait(false);
    }

    /// <summary>The article's pattern: every send begun at once, each ended in its callback.</summary>
    private static void SendApm(Socket sender, EndPoint target, int datagrams)
    {
        using var done = new CountdownEvent(datagrams);
        Exception? failure = null;
        AsyncCallback callback = ar =>
        {
            try
            {
                ((Socket)ar.AsyncState!).EndSendTo(ar);
            }
            catch (Exception e) when (e is SocketException or ObjectDisposedException)
            {
                Interlocked.CompareExchange(ref failure, e, null); // keep the first failure; read after the countdown completes
            }
            done.Signal();
        };
        for (int i = 0; i < datagrams; i++)
        {
            sender.BeginSendTo(Payload, 0, Payload.Length, SocketFlags.None, target, callback, sender);
        }
        if (!done.Wait(TimeSpan.FromSeconds(30)))
        {
            throw new InvalidOperationException($"{done.CurrentCount} BeginSendTo callbacks did not arrive within 30 s.");
        }
        if (failure is not null) throw new InvalidOperationException($"EndSendTo failed: {failure.Message}", failure);
    }

    /// <summary>Waits until <paramref name="expected"/> datagrams arrived since <paramref name="before"/>, or none for 100 ms (at most 3 s); returns how many arrived.</summary>
    private static long Drain(ReceiverState receiver, long before, long expected)
    {
        long last = Volatile.Read(ref receiver.Count);
        var draining = LabClock.Budget(TimeSpan.FromSeconds(3));
        var quiet = LabClock.Budget(TimeSpan.FromMilliseconds(100));
        while (last - before < expected && !quiet.IsSpent && !draining.IsSpent)
        {
            Thread.Sleep(5);
            long now = Volatile.Read(ref receiver.Count);
            if (now != last)
            {
                last = now;
                quiet = LabClock.Budget(TimeSpan.FromMilliseconds(100));
            }
        }
        return last - before;
    }

    private static void Receive(Socket socket, ReceiverState state)
    {
        byte[] buffer = new byte[2048];
        while (!Volatile.Read(ref state.Stop))
        {
            try
            {
                if (socket.Receive(buffer) > 0)
                {
                    // Single writer; Drain reads it with Volatile.Read, so the count is published in order.
                    Volatile.Write(ref state.Count, state.Count + 1);
                }
            }
            catch (SocketException e) when (e.SocketErrorCode is SocketError.TimedOut or SocketError.WouldBlock)
            {
                // Poll timeout: look at the stop flag again.
            }
            catch (Exception e) when (e is ObjectDisposedException or SocketException)
            {
                return; // the socket was closed under us: the run is over
            }
        }
    }

    /// <summary>The receiver's count and stop flag, shared with the sending thread.</summary>
    private sealed class ReceiverState
    {
        public long Count;
        public bool Stop;
    }
}
