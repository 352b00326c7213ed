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

    /// <summary>Throws unless <paramref name="endPoint"/> is a loopback address: the one check every load target passes.</summary>
    /// <exception cref="ArgumentException">Not loopback (named as <paramref name="parameter"/>).</exception>
    internal static void EnsureLoopback(IPEndPoint endPoint, string parameter)
    {
        if (!IPAddress.IsLoopback(endPoint.Address)) throw new ArgumentException($"The load generator only targets loopback, not {endPoint}.", parameter);
    }

    private static Socket Create(IPEndPoint endPoint)
    {
        ArgumentNullException.ThrowIfNull(endPoint);
        EnsureLoopback(endPoint, nameof(endPoint));
        return new Socket(endPoint.AddressFamily, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
    }
}
