using System.Net;
using System.Net.Sockets;

namespace Manaloc.Lab.RequestServer.Load;

/// <summary>
/// The lab's client connections: TCP to a loopback address only (the lab loads servers it started on
/// 127.0.0.1, never another machine), with Nagle's delay off because its requests are small and their
/// latency is what is measured.
/// </summary>
public static class LoopbackSocket
{
    /// <summary>Connects to <paramref name="endPoint"/>; the socket is disposed when the connect fails.</summary>
    /// <exception cref="ArgumentException"><paramref name="endPoint"/> is not a loopback address.</exception>
    public static async Task<Socket> ConnectAsync(IPEndPoint endPoint, CancellationToken cancellation = default)
    {
        var socket = Create(endPoint);
        try
        {
            await socket.ConnectAsync(endPoint, cancellation).ConfigureAwait(false);
            return socket;
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    /// <summary>Connects to <paramref name="endPoint"/> on this thread; the socket is disposed when the connect fails.</summary>
    /// <exception cref="ArgumentException"><paramref name="endPoint"/> is not a loopback address.</exception>
    public static Socket Connect(IPEndPoint endPoint)
    {
        var socket = Create(endPoint);
        try
        {
            socket.Connect(endPoint);
            return socket;
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    private static Socket Create(IPEndPoint endPoint)
    {
        ArgumentNullException.ThrowIfNull(endPoint);
        if (!IPAddress.IsLoopback(endPoint.Address)) throw new ArgumentException($"The lab's load targets loopback only, not {endPoint}.", nameof(endPoint));
        return new Socket(endPoint.AddressFamily, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
    }
}
