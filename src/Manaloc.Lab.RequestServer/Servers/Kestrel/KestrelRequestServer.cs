using System.Diagnostics;
using System.Net;
using Manaloc.AspNetCore;
using Manaloc.AspNetCore.Dispatching;
using Manaloc.Threading;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace Manaloc.Lab.RequestServer.Servers.Kestrel;

/// <summary>
/// The Kestrel builds. <c>kestrel</c>: Kestrel's socket transport and memory pool, a <see cref="ConnectionHandler"/>
/// over System.IO.Pipelines that runs each request inline on its connection (the ThreadPool runs every connection).
/// <c>kestrel-manaloc</c>: the same transport with Manaloc.AspNetCore's registrations, as a service would wire them:
/// Kestrel's pool is Manaloc's (<c>AddManalocKestrelMemoryPool</c>) and the frames run on a hosted dedicated
/// dispatcher (<c>AddDedicatedDispatcher</c>) in turns (<see cref="FrameTurn"/>).
/// </summary>
/// <remarks>
/// kestrel: no queue: a connection's requests run one after another, so a flooding connection occupies one
/// ThreadPool thread and the others share what is left. kestrel-manaloc: connections take turns on the
/// dispatcher's workers, one turn per connection at a time. The host stops the dispatcher after Kestrel has
/// stopped (its "stopped" phase), so every turn a connection waits for still runs. Shutdown: Kestrel stops accepting and asks every
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

    /// <summary>The dispatcher's name (its key in the container) in the kestrel-manaloc build.</summary>
    private const string DispatcherName = "frames";

    public static async Task<KestrelRequestServer> StartAsync(ServerOptions options, ServerBuild build = ServerBuild.Kestrel)
    {
        if (build is not (ServerBuild.Kestrel or ServerBuild.KestrelManaloc)) throw new ArgumentOutOfRangeException(nameof(build), build, "Not a Kestrel build.");
        var state = new KestrelServerState(options, build);
        var builder = WebApplication.CreateSlimBuilder(new WebApplicationOptions { Args = [] });
        builder.Logging.ClearProviders();
        builder.Services.AddSingleton(state);
        bool manaloc = build == ServerBuild.KestrelManaloc;
        if (manaloc)
        {
            builder.Services.AddManalocKestrelMemoryPool();
            // One turn per connection at most, so the queue never holds more than the connection cap.
            builder.Services.AddDedicatedDispatcher(DispatcherName, o =>
            {
                o.ThreadCount = options.Workers;
                o.Capacity = options.MaxConnections;
            });
        }
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
        // The hosted dispatcher starts in the host's "starting" phase, before Kestrel takes a connection.
        if (manaloc) state.Dispatcher = app.Services.GetRequiredKeyedService<HostedDispatcher>(DispatcherName).Dispatcher;
        var endPoint = listen?.IPEndPoint ?? throw new InvalidOperationException("Kestrel did not bind its endpoint.");
        return new KestrelRequestServer(app, state, endPoint);
    }

    public ServerBuild Build => _state.Build;

    /// <summary>The build's name in stats and reports.</summary>
    internal static string NameOf(ServerBuild build) => ServerFactory.NameOf(build);
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
        return new ShutdownReport(ServerStats.Capture(NameOf(Build), Counters), Stopwatch.GetElapsedTime(start), open);
    }

    public async ValueTask DisposeAsync()
    {
        await ShutdownAsync(TimeSpan.FromSeconds(1)).ConfigureAwait(false);
        await _app.DisposeAsync().ConfigureAwait(false);
    }
}

/// <summary>What the Kestrel build's handlers share: options, counters, the shutdown flag, and the dispatcher (kestrel-manaloc).</summary>
internal sealed class KestrelServerState(ServerOptions options, ServerBuild build)
{
    private int _open;
    private DedicatedThreadDispatcher? _dispatcher;
    public ServerOptions Options { get; } = options;
    public ServerBuild Build { get; } = build;
    /// <summary>The hosted dispatcher (kestrel-manaloc), set once the host has started and before a connection is served; null in the kestrel build.</summary>
    public DedicatedThreadDispatcher? Dispatcher
    {
        get => Volatile.Read(ref _dispatcher);
        set => Volatile.Write(ref _dispatcher, value);
    }
    public ServerCounters Counters { get; } = new();
    public volatile bool ShuttingDown;
    public int OpenConnections => Volatile.Read(ref _open);
    public void Opened() => Interlocked.Increment(ref _open);
    public void Closed() => Interlocked.Decrement(ref _open);
}
