using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Experiments;

/// <summary>The loopback client and server, and the sockets they opened.</summary>
public sealed partial class Nagle
{
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
