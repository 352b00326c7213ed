using System.Net;
using System.Net.Sockets;
using Manaloc.Lab.RequestServer.Protocol;
using Manaloc.Lab.RequestServer.Servers;

namespace Manaloc.Lab.RequestServer.Load;

/// <summary>
/// One control connection that asks a server for its <see cref="ServerStats"/>, as often as needed:
/// kept open across a comparison so that opening it is not part of any measured phase.
/// </summary>
public sealed class StatsClient : IDisposable
{
    private readonly Socket _socket;
    private readonly byte[] _buffer = new byte[Frame.MaxResponseFrame];
    private long _nextId = 1;

    private StatsClient(Socket socket) => _socket = socket;

    /// <summary>Connects to <paramref name="server"/>.</summary>
    /// <exception cref="ArgumentException"><paramref name="server"/> is not a loopback address.</exception>
    public static async Task<StatsClient> ConnectAsync(IPEndPoint server, CancellationToken cancellation = default)
        => new StatsClient(await LoopbackSocket.ConnectAsync(server, cancellation).ConfigureAwait(false));

    /// <summary>One snapshot.</summary>
    /// <exception cref="InvalidDataException">The server closed the connection or answered something else.</exception>
    public async Task<ServerStats> QueryAsync(CancellationToken cancellation = default)
    {
        long id = _nextId++;
        var request = new byte[Frame.RequestSize(0)];
        Frame.WriteRequest(request, new RequestHeader(id, 0, Op.Stats), default);
        await _socket.SendAsync(request, SocketFlags.None, cancellation).ConfigureAwait(false);
        int filled = 0;
        while (true)
        {
            int n = await _socket.ReceiveAsync(_buffer.AsMemory(filled), SocketFlags.None, cancellation).ConfigureAwait(false);
            if (n == 0) throw new InvalidDataException("The server closed the connection before answering the stats request.");
            filled += n;
            if (Frame.TryReadResponse(_buffer.AsSpan(0, filled), out long answerId, out var status, out var range, out _))
            {
                if (status != Status.Ok || answerId != id) throw new InvalidDataException($"The stats request {id} was answered {status} (id {answerId}).");
                return ServerStats.FromJsonUtf8(_buffer.AsSpan(0, filled)[range]);
            }
        }
    }

    /// <summary>Closes the connection.</summary>
    public void Dispose()
    {
        try { _socket.Shutdown(SocketShutdown.Both); } catch (SocketException) { /* already closed */ }
        _socket.Dispose();
    }
}
