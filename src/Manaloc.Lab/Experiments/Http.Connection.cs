using System.Net;
using System.Net.Sockets;
using System.Text;
using Manaloc.Lab.RequestServer.Load;

namespace Manaloc.Lab.Experiments;

/// <summary>
/// One HTTP/1.1 keep-alive connection on a raw socket: sends a request already encoded, reads one response
/// (status line, headers, a Content-Length or chunked body). No pipelining: one request at a time.
/// </summary>
internal sealed class HttpConnection : IDisposable
{
    private readonly Socket _socket;
    private readonly byte[] _buffer = new byte[64 * 1024];
    private int _start, _end;

    private HttpConnection(Socket socket) => _socket = socket;

    public static async Task<HttpConnection> ConnectAsync(IPEndPoint endpoint, CancellationToken cancellation)
        => new HttpConnection(await LoopbackSocket.ConnectAsync(endpoint, cancellation).ConfigureAwait(false));

    /// <summary>Encodes a request (keep-alive) for <see cref="SendAsync"/>.</summary>
    public static byte[] Encode(string method, string path, string client, string? jsonBody = null)
    {
        var text = new StringBuilder();
        text.Append(method).Append(' ').Append(path).Append(" HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Client: ").Append(client).Append("\r\n");
        byte[] body = jsonBody is null ? [] : Encoding.UTF8.GetBytes(jsonBody);
        if (jsonBody is not null) text.Append("Content-Type: application/json\r\nContent-Length: ").Append(body.Length).Append("\r\n");
        text.Append("\r\n");
        return [.. Encoding.ASCII.GetBytes(text.ToString()), .. body];
    }

    /// <summary>Sends <paramref name="request"/> and reads its response; the status code.</summary>
    /// <exception cref="IOException">The connection closed or the response was malformed (the request is lost).</exception>
    public async Task<int> SendAsync(byte[] request, CancellationToken cancellation)
    {
        await _socket.SendAsync(request, SocketFlags.None, cancellation).ConfigureAwait(false);
        int headerEnd;
        while ((headerEnd = IndexOf(_buffer.AsSpan(_start, _end - _start), "\r\n\r\n"u8)) < 0) await FillAsync(cancellation).ConfigureAwait(false);
        var head = Encoding.ASCII.GetString(_buffer, _start, headerEnd);
        _start += headerEnd + 4;
        if (!head.StartsWith("HTTP/1.1 ", StringComparison.Ordinal) || head.Length < 12 || !int.TryParse(head.AsSpan(9, 3), out int status))
            throw new IOException($"Not an HTTP/1.1 response: '{head[..Math.Min(head.Length, 40)]}'.");
        long length = 0;
        bool chunked = false;
        foreach (var line in head.Split("\r\n"))
        {
            if (line.StartsWith("content-length:", StringComparison.OrdinalIgnoreCase)) length = long.Parse(line.AsSpan(15).Trim(), System.Globalization.CultureInfo.InvariantCulture);
            else if (line.StartsWith("transfer-encoding:", StringComparison.OrdinalIgnoreCase) && line.Contains("chunked", StringComparison.OrdinalIgnoreCase)) chunked = true;
        }
        if (chunked)
        {
            while (true)
            {
                int lineEnd;
                while ((lineEnd = IndexOf(_buffer.AsSpan(_start, _end - _start), "\r\n"u8)) < 0) await FillAsync(cancellation).ConfigureAwait(false);
                var sizeText = Encoding.ASCII.GetString(_buffer, _start, lineEnd).Split(';')[0];
                long size = long.Parse(sizeText, System.Globalization.NumberStyles.HexNumber, System.Globalization.CultureInfo.InvariantCulture);
                _start += lineEnd + 2;
                await SkipAsync(size + 2, cancellation).ConfigureAwait(false); // the data and its CRLF (after the last chunk: the empty trailer line)
                if (size == 0) break;
            }
        }
        else
        {
            await SkipAsync(length, cancellation).ConfigureAwait(false);
        }
        return status;
    }

    private async Task SkipAsync(long count, CancellationToken cancellation)
    {
        while (count > 0)
        {
            if (_start == _end) await FillAsync(cancellation).ConfigureAwait(false);
            int take = (int)Math.Min(count, _end - _start);
            _start += take;
            count -= take;
        }
    }

    private async Task FillAsync(CancellationToken cancellation)
    {
        if (_start > 0)
        {
            Buffer.BlockCopy(_buffer, _start, _buffer, 0, _end - _start);
            _end -= _start;
            _start = 0;
        }
        if (_end == _buffer.Length) throw new IOException("A response header is larger than the load generator's buffer.");
        int read = await _socket.ReceiveAsync(_buffer.AsMemory(_end), SocketFlags.None, cancellation).ConfigureAwait(false);
        if (read == 0) throw new IOException("The server closed the connection before the response was complete.");
        _end += read;
    }

    private static int IndexOf(ReadOnlySpan<byte> data, ReadOnlySpan<byte> value) => data.IndexOf(value);

    public void Dispose() => _socket.Dispose();
}
