using System.Net;
using System.Net.Sockets;

namespace Manaloc.Lab.RequestServer.Servers;

/// <summary>The listener and accept loop the socket-based builds (manaloc, bcl) share: accept, refuse or start, until stopped.</summary>
internal static class AcceptLoop
{
    /// <summary>A TCP listener on 127.0.0.1:<paramref name="port"/> (0: a free port), with a backlog for the load's connection bursts.</summary>
    public static Socket Listen(int port)
    {
        var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            listener.Bind(new IPEndPoint(IPAddress.Loopback, port));
            listener.Listen(512);
            return listener;
        }
        catch
        {
            listener.Dispose();
            throw;
        }
    }

    /// <summary>
    /// Accepts connections until <paramref name="stop"/> is cancelled or the listener is closed. A connection that
    /// arrives while <paramref name="refuse"/> says so is closed and counted refused; any other is handed to
    /// <paramref name="start"/> and counted after it is set up (so a snapshot that has seen it does not count its cost).
    /// </summary>
    public static async Task RunAsync(Socket listener, CancellationToken stop, Func<bool> refuse, ServerCounters counters, Action<Socket> start)
    {
        while (true)
        {
            Socket socket;
            try
            {
                socket = await listener.AcceptAsync(stop).ConfigureAwait(false);
            }
            catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException or SocketException)
            {
                return;
            }
            if (refuse())
            {
                counters.CountRefused();
                socket.Dispose();
                continue;
            }
            start(socket);
            counters.CountConnection();
        }
    }
}
