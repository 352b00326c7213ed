using System.Net.Sockets;

namespace Manaloc.Lab.RequestServer.Servers;

/// <summary>Closing a connection without destroying answers already sent.</summary>
internal static class SocketClose
{
    /// <summary>How long a closing connection keeps reading (and discarding) what the client still sends.</summary>
    public static readonly TimeSpan Linger = TimeSpan.FromSeconds(1);

    /// <summary>
    /// Sends FIN, then reads and discards until the client closes its side or <see cref="Linger"/> passes,
    /// then closes. Why: closing a socket with unread data sends a reset, and a reset makes the client's
    /// kernel drop answers it has received but the client has not read yet; a client that is still sending
    /// (a flooder) would lose answers the server counted as sent.
    /// </summary>
    public static async Task LingeringCloseAsync(Socket socket, Memory<byte> scratch)
    {
        try
        {
            socket.Shutdown(SocketShutdown.Send);
            using var linger = new CancellationTokenSource(Linger);
            while (await socket.ReceiveAsync(scratch, SocketFlags.None, linger.Token).ConfigureAwait(false) > 0)
            {
                // discard
            }
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException or OperationCanceledException)
        {
            // reset by the client, already closed, or the linger is over
        }
        finally
        {
            socket.Dispose();
        }
    }
}
