using System.Diagnostics;
using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace Manaloc.Lab.RequestServer.Servers.Kestrel;

/// <summary>
/// The Kestrel build: Kestrel's socket transport and memory pool, a <see cref="ConnectionHandler"/> over
/// System.IO.Pipelines that runs each request inline on its connection (the ThreadPool runs every connection).
/// </summary>
/// <remarks>
/// No queue: a connection's requests run one after another, so a flooding connection occupies one
/// ThreadPool thread and the others share what is left. Shutdown: Kestrel stops accepting and asks every
/// connection to close; the handler answers busy to what it has buffered and returns. Connections still
/// open five seconds after the drain deadline are aborted by Kestrel. Answers are counted once flushed
/// to Kestrel's transport: an abort can drop such answers without the handler knowing.
/// </remarks>
internal sealed class KestrelRequestServer : IRequestServer
{
    private static readonly TimeSpan AbortGrace = TimeSpan.FromSeconds(5);
    private readonly WebApplication _app;
    private readonly KestrelServerState _state;
    private Task<ShutdownReport>? _shutdown;

    private KestrelRequestServer(WebApplication app, KestrelServerState state, IPEndPoint endPoint)
    {
        _app = app;
        _state = state;
        EndPoint = endPoint;
    }

    public static async Task<KestrelRequestServer> StartAsync(ServerOptions options)
    {
        var state = new KestrelServerState(options);
        var builder = WebApplication.CreateSlimBuilder(new WebApplicationOptions { Args = [] });
        builder.Logging.ClearProviders();
        builder.Services.AddSingleton(state);
        ListenOptions? listen = null;
        builder.WebHost.ConfigureKestrel(kestrel =>
        {
            kestrel.Limits.MaxConcurrentConnections = options.MaxConnections;
            kestrel.Listen(IPAddress.Loopback, options.Port, l =>
            {
                l.UseConnectionHandler<FrameConnectionHandler>();
                listen = l;
            });
        });
        var app = builder.Build();
        await app.StartAsync().ConfigureAwait(false);
        var endPoint = listen?.IPEndPoint ?? throw new InvalidOperationException("Kestrel did not bind its endpoint.");
        return new KestrelRequestServer(app, state, endPoint);
    }

    public ServerBuild Build => ServerBuild.Kestrel;
    public IPEndPoint EndPoint { get; }
    public ServerCounters Counters => _state.Counters;

    public Task<ShutdownReport> ShutdownAsync(TimeSpan drain)
    {
        lock (_state)
        {
            return _shutdown ??= ShutdownCoreAsync(drain);
        }
    }

    private async Task<ShutdownReport> ShutdownCoreAsync(TimeSpan drain)
    {
        long start = Stopwatch.GetTimestamp();
        int open = _state.OpenConnections;
        _state.ShuttingDown = true; // handlers answer busy to every frame read from now on
        // Handlers answer busy to every frame from now on, so each returns within one op of the close
        // request; Kestrel's abort (which discards answers already handed to its transport, unseen by the
        // handler) is only the last resort, a grace period after the drain deadline.
        using (var deadline = new CancellationTokenSource(drain + AbortGrace))
        {
            await _app.StopAsync(deadline.Token).ConfigureAwait(false);
        }
        // Kestrel returns once its connections are closed or aborted; a handler unwinding an abort finishes just after.
        long waitUntil = Stopwatch.GetTimestamp() + 5 * Stopwatch.Frequency;
        while (_state.OpenConnections > 0 && Stopwatch.GetTimestamp() < waitUntil) await Task.Delay(1).ConfigureAwait(false);
        return new ShutdownReport(ServerStats.Capture("kestrel", Counters), Stopwatch.GetElapsedTime(start), open);
    }

    public async ValueTask DisposeAsync()
    {
        await ShutdownAsync(TimeSpan.FromSeconds(1)).ConfigureAwait(false);
        await _app.DisposeAsync().ConfigureAwait(false);
    }
}

/// <summary>What the Kestrel build's handlers share: options, counters, the shutdown flag.</summary>
internal sealed class KestrelServerState(ServerOptions options)
{
    private int _open;
    public ServerOptions Options { get; } = options;
    public ServerCounters Counters { get; } = new();
    public volatile bool ShuttingDown;
    public int OpenConnections => Volatile.Read(ref _open);
    public void Opened() => Interlocked.Increment(ref _open);
    public void Closed() => Interlocked.Decrement(ref _open);
}
