using System.Net;
using System.Net.Sockets;
using Manaloc.Lab.RequestServer;
using Manaloc.Lab.RequestServer.Protocol;
using Manaloc.Lab.RequestServer.Servers;

namespace RequestServer.Tests;

/// <summary>A blocking protocol client for tests; every read times out rather than hang.</summary>
internal sealed class TestClient : IDisposable
{
    private readonly Socket _socket;
    private readonly byte[] _buffer = new byte[2 * Frame.MaxResponseFrame];
    private int _filled;

    public TestClient(IPEndPoint server)
    {
        _socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true, ReceiveTimeout = 15_000, SendTimeout = 15_000 };
        _socket.Connect(server);
    }

    public void SendRaw(ReadOnlySpan<byte> bytes)
    {
        while (!bytes.IsEmpty) bytes = bytes[_socket.Send(bytes)..];
    }

    public void Send(long id, Op op, ReadOnlySpan<byte> payload, int deadlineMicros = 0)
    {
        var frame = new byte[Frame.RequestSize(payload.Length)];
        Frame.WriteRequest(frame, new RequestHeader(id, deadlineMicros, op), payload);
        SendRaw(frame);
    }

    public void SendInt(long id, Op op, int value, int deadlineMicros = 0) => Send(id, op, BitConverter.GetBytes(value), deadlineMicros);

    /// <summary>The next answer, or null when the server closed the connection.</summary>
    public (long Id, Status Status, byte[] Payload)? Read()
    {
        while (true)
        {
            if (Frame.TryReadResponse(_buffer.AsSpan(0, _filled), out long id, out var status, out var range, out int size))
            {
                var payload = _buffer.AsSpan(0, size)[range].ToArray();
                _buffer.AsSpan(size, _filled - size).CopyTo(_buffer);
                _filled -= size;
                return (id, status, payload);
            }
            int n;
            try
            {
                n = _socket.Receive(_buffer.AsSpan(_filled));
            }
            catch (SocketException e) when (e.SocketErrorCode == SocketError.ConnectionReset)
            {
                n = 0;
            }
            if (n == 0) return null;
            _filled += n;
        }
    }

    public (long Id, Status Status, byte[] Payload) ReadAnswer() => Read() ?? throw new Xunit.Sdk.XunitException("The server closed the connection instead of answering.");

    public void FinishSending() => _socket.Shutdown(SocketShutdown.Send);

    public void Dispose() => _socket.Dispose();
}

/// <summary>Starts a server of each build for a test and shuts it down afterwards.</summary>
internal static class TestServers
{
    public static TheoryData<string> Builds() => new(ServerFactory.BuildNames);

    public static Task<IRequestServer> StartAsync(string build, ServerOptions? options = null)
        => ServerFactory.StartAsync(ServerFactory.Parse(build), options).WaitAsync(TimeSpan.FromSeconds(30));

    /// <summary>samples/RequestServer's <c>serve</c> in a child process (the test project references the sample, so RequestServer.dll sits beside the tests).</summary>
    public static ServerLaunch SampleLaunch()
    {
        string host = Environment.ProcessPath is { } p && Path.GetFileNameWithoutExtension(p) == "dotnet" ? p : "dotnet";
        return new ServerLaunch(host, ["exec", Path.Combine(AppContext.BaseDirectory, "RequestServer.dll"), "serve"]);
    }

    /// <summary>Waits (at most 10 s) until <paramref name="condition"/> holds.</summary>
    public static void WaitUntil(Func<bool> condition, string what)
    {
        var until = DateTime.UtcNow.AddSeconds(10);
        while (!condition())
        {
            if (DateTime.UtcNow > until) throw new Xunit.Sdk.XunitException($"Timed out waiting until {what}.");
            Thread.Sleep(1);
        }
    }
}
