using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Experiments;

/// <summary>The loopback client and server, and the sockets they opened.</summary>
public sealed partial class Nagle
{
    /// <summary>Accepts one connection (within the I/O timeout) and answers every 16 bytes with 1 byte until the client shuts down.</summary>
    private void Serve(Socket listener, SocketSet sockets)
    {
        if (!listener.Poll(IoTimeout, SelectMode.SelectRead))
        {
            return;
        }
        Socket connection = listener.Accept();
        Track(sockets, connection);
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

    private Socket Open(SocketSet sockets, SocketType type, ProtocolType protocol)
        => Track(sockets, new Socket(AddressFamily.InterNetwork, type, protocol));

    /// <summary>
    /// Adds a socket to the run's set. A socket that arrives after the set was closed (an accept
    /// racing with a failing client) is closed at once, so none escapes the finally block.
    /// </summary>
    private Socket Track(SocketSet sockets, Socket socket)
    {
        Interlocked.Increment(ref _socketsOpened); // counters only, read by tests after the run
        Interlocked.Increment(ref _socketsOpen);
        if (sockets.TryAdd(socket))
        {
            return socket;
        }
        socket.Dispose();
        Interlocked.Decrement(ref _socketsOpen);
        throw new ObjectDisposedException(nameof(Socket), "The run's sockets were already closed.");
    }

    private void CloseAll(SocketSet sockets)
    {
        foreach (var socket in sockets.Close())
        {
            socket.Dispose();
            Interlocked.Decrement(ref _socketsOpen);
        }
    }

    /// <summary>The sockets of one run, shared by the client and server threads; closed once.</summary>
    private sealed class SocketSet
    {
        private readonly List<Socket> _sockets = [];
        private bool _closed;

        public bool TryAdd(Socket socket)
        {
            lock (_sockets)
            {
                if (_closed) return false;
                _sockets.Add(socket);
                return true;
            }
        }

        public Socket[] Close()
        {
            lock (_sockets)
            {
                _closed = true;
                var all = _sockets.ToArray();
                _sockets.Clear();
                return all;
            }
        }
    }
}
