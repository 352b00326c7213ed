using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Experiments;

/// <summary>The send loops per API, the receiver that counts what arrived, and the sockets opened.</summary>
public sealed partial class UdpSend
{
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
        long quietSince = Stopwatch.GetTimestamp(), started = quietSince;
        while (last - before < expected && Stopwatch.GetElapsedTime(quietSince).TotalMilliseconds < 100 && Stopwatch.GetElapsedTime(started).TotalSeconds < 3)
        {
            Thread.Sleep(5);
            long now = Volatile.Read(ref receiver.Count);
            if (now != last)
            {
                last = now;
                quietSince = Stopwatch.GetTimestamp();
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
