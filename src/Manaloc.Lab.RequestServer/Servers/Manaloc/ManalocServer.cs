using System.Collections.Concurrent;
using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using Manaloc.Buffers;
using Manaloc.Memory;
using Manaloc.Pooling;
using Manaloc.Threading;

namespace Manaloc.Lab.RequestServer.Servers.Manaloc;

/// <summary>
/// The Manaloc build: frames in <see cref="BufferManager"/> buffers, pooled request objects queued per
/// connection and run on a <see cref="DedicatedThreadDispatcher"/> whose queue holds one turn per
/// connection, deadlines checked before work starts, native records for the record op.
/// </summary>
/// <remarks>
/// Why: a flooding connection must not become everyone's latency. Connections take turns on the workers,
/// one request per turn, so a request waits behind at most one request of each other connection; and a
/// connection may hold at most <see cref="ServerOptions.ConnectionShare"/> requests queued, running or
/// unsent, beyond which its reader stops reading it (TCP pushes back on the sender). That bounds memory:
/// at most share × connections requests (64 KiB payload and answer each), plus each connection's buffers
/// (<see cref="ServerOptions.HeldBytesBound"/>). Work stays off the ThreadPool (which runs only the socket
/// reads, and the sends the kernel could not take at once), so a flood cannot starve it; a worker sends its
/// answers itself, so a request changes threads once.
/// Shutdown: stop accepting, answer busy to new frames, let the dispatcher drain until the deadline (a
/// <see cref="ScheduledValue{T}"/> that workers poll turns the rest into busy answers), run the turns the
/// dispatcher hands back (answering busy), then close each connection once its last answer is written.
/// </remarks>
internal sealed class ManalocServer : IRequestServer
{
    private readonly Socket _listener;
    private readonly ConcurrentDictionary<ManalocConnection, byte> _connections = new();
    private readonly CancellationTokenSource _stopAccepting = new();
    private readonly CancellationTokenSource _stopReading = new();
    private readonly TypeAllocator _records;
    private readonly Task _acceptLoop;
    private ScheduledValue<bool>? _drainOver; // null until shutdown; read by workers before each item
    private volatile bool _shuttingDown;
    private Task<ShutdownReport>? _shutdown;

    private ManalocServer(ServerOptions options)
    {
        Options = options;
        Buffers = new BufferManager(new BufferManagerOptions { Name = "request-server.frames", MaxBufferSize = 1 << 20 });
        Dispatcher = new DedicatedThreadDispatcher(new DispatcherOptions
        {
            Name = "request-server",
            ThreadCount = options.Workers,
            // One turn per connection at most (ManalocConnection.RunTurn), so the queue never fills;
            // FailFast makes a post after the shutdown return false rather than wait.
            Capacity = options.MaxConnections,
            FullMode = FullQueueMode.FailFast,
        });
        Requests = new SemiLocalPool<PooledRequest>(PoolPolicies.Create(() => new PooledRequest(this)), new PoolOptions { Name = "request-server.requests" });
        _records = new TypeAllocator(new TypeAllocatorOptions { Name = "request-server.records", Checked = false });
        RecordBatch = new NativeRecordBatch(_records);
        _listener = AcceptLoop.Listen(options.Port);
        EndPoint = (IPEndPoint)_listener.LocalEndPoint!;
        _acceptLoop = AcceptLoopAsync();
    }

    public static ManalocServer Start(ServerOptions options) => new(options);

    public ServerBuild Build => ServerBuild.Manaloc;
    public IPEndPoint EndPoint { get; }
    public ServerCounters Counters { get; } = new();
    internal ServerOptions Options { get; }
    internal BufferManager Buffers { get; }
    internal DedicatedThreadDispatcher Dispatcher { get; }
    internal SemiLocalPool<PooledRequest> Requests { get; }
    internal NativeRecordBatch RecordBatch { get; }
    internal bool IsShuttingDown => _shuttingDown;
    internal CancellationToken ReadStop => _stopReading.Token;

    /// <summary>True once the shutdown's drain deadline has passed: accepted items are answered busy instead of run. One volatile read.</summary>
    internal bool DrainOver => Volatile.Read(ref _drainOver)?.Value ?? false;

    internal void Remove(ManalocConnection connection) => _connections.TryRemove(connection, out _);

    private Task AcceptLoopAsync() => AcceptLoop.RunAsync(_listener, _stopAccepting.Token,
        refuse: () => _shuttingDown || _connections.Count >= Options.MaxConnections, Counters,
        start: socket =>
        {
            var connection = new ManalocConnection(this, socket);
            _connections.TryAdd(connection, 0);
            connection.Start();
        });

    public Task<ShutdownReport> ShutdownAsync(TimeSpan drain)
    {
        lock (_connections)
        {
            return _shutdown ??= ShutdownCoreAsync(drain);
        }
    }

    private async Task<ShutdownReport> ShutdownCoreAsync(TimeSpan drain)
    {
        long start = Stopwatch.GetTimestamp();
        _shuttingDown = true; // readers answer busy to every frame read from now on
        // The drain deadline runs from the call, before anything here awaits (an await may take long on a busy machine).
        var drainOver = new ScheduledValue<bool>(false, true, drain);
        Volatile.Write(ref _drainOver, drainOver);
        int open = _connections.Count;
        await _stopAccepting.CancelAsync().ConfigureAwait(false);
        _listener.Dispose();
        await _acceptLoop.ConfigureAwait(false);
        // The dispatcher refuses new items from here on (readers answer busy), drains until the
        // deadline and hands back what it did not run; with the flag flipped, running those answers busy.
        var notRun = await Dispatcher.ShutdownAsync(drain).ConfigureAwait(false);
        drainOver.FlipNow();
        foreach (var item in notRun) item();
        await Dispatcher.Completion.ConfigureAwait(false);
        await _stopReading.CancelAsync().ConfigureAwait(false);
        var closing = _connections.Keys.Select(c => c.Completion).ToArray();
        await Task.WhenAll(closing).WaitAsync(TimeSpan.FromSeconds(10)).ConfigureAwait(false);
        drainOver.Dispose();
        var report = new ShutdownReport(ServerStats.Capture("manaloc", Counters), Stopwatch.GetElapsedTime(start), open);
        RecordBatch.Dispose();
        _records.Dispose();
        return report;
    }

    public async ValueTask DisposeAsync()
    {
        await ShutdownAsync(TimeSpan.FromSeconds(1)).ConfigureAwait(false);
        _stopAccepting.Dispose();
        _stopReading.Dispose();
        Requests.Dispose();
        Buffers.Dispose();
    }
}
