using System.Net;
using System.Net.Sockets;
using Garnet;

namespace CacheService.Tests;

/// <summary>
/// A Garnet server embedded in the test process on a free 127.0.0.1 port: started once for the test class, disposed
/// after it. Nothing to install and no process to manage; memory-only and small (a few MiB of log and index, no
/// checkpoints, no disk).
/// </summary>
public sealed class GarnetFixture : IDisposable
{
    private readonly GarnetServer _server;

    public GarnetFixture()
    {
        Port = FreePort();
        _server = new GarnetServer(
        [
            "--bind", "127.0.0.1",
            "--port", Port.ToString(System.Globalization.CultureInfo.InvariantCulture),
            "--memory", "16m",   // the store's in-memory log
            "--page", "1m",
            "--index", "1m",     // the hash index
            "--pubsub-pagesize", "64k",
            "--logger-level", "Error",
            "--disable-console-logger",
            "-q",                // no banner
        ]);
        _server.Start();
    }

    /// <summary>The port the server listens on, at 127.0.0.1.</summary>
    public int Port { get; }

    /// <summary>The StackExchange.Redis configuration string of the server, with bounded timeouts.</summary>
    public string Configuration => $"127.0.0.1:{Port},connectTimeout=5000,syncTimeout=5000,asyncTimeout=5000";

    public void Dispose() => _server.Dispose();

    /// <summary>A port free now (the kernel's choice for port 0); the server binds it right after.</summary>
    private static int FreePort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }
}
