using System.Collections.Concurrent;
using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Threading.Channels;
using Manaloc.Lab.RequestServer.Protocol;

namespace Manaloc.Lab.RequestServer.Servers.Bcl;

/// <summary>
/// The BCL build, what a careful engineer writes with the framework's defaults: async sockets read through
/// System.IO.Pipelines, a <c>new byte[]</c> per frame and per answer, one unbounded <see cref="Channel{T}"/>
/// drained by worker tasks on the ThreadPool, deadlines as <see cref="DateTime.UtcNow"/> instants.
/// </summary>
/// <remarks>
/// Nothing pushes back: a client that sends faster than the workers run fills the channel, and every
/// other client's request waits behind its backlog (first in, first out). Shutdown: stop accepting,
/// complete the channel (later frames are answered busy), let the workers drain until the deadline and
/// answer busy to what is left, then close each connection once its last answer is written.
/// </remarks>
internal sealed class BclServer : IRequestServer
{
    private readonly Socket _listener;
    private readonly Channel<BclRequest> _queue = Channel.CreateUnbounded<BclRequest>();
    private readonly ConcurrentDictionary<BclConnection, byte> _connections = new();
    private readonly CancellationTokenSource _stopAccepting = new();
    private readonly CancellationTokenSource _stopReading = new();
    private readonly Task _acceptLoop;
    private readonly Task[] _workers;
    private long _drainDeadlineTicks = long.MaxValue; // DateTime ticks (UTC) after which queued requests are answered busy
    private volatile bool _shuttingDown;
    private Task<ShutdownReport>? _shutdown;

    private BclServer(ServerOptions options)
    {
        Options = options;
        _listener = AcceptLoop.Listen(options.Port);
        EndPoint = (IPEndPoint)_listener.LocalEndPoint!;
        _workers = Enumerable.Range(0, options.Workers).Select(_ => Task.Run(WorkerAsync)).ToArray();
        _acceptLoop = AcceptLoopAsync();
    }

    public static BclServer Start(ServerOptions options) => new(options);

    public ServerBuild Build => ServerBuild.Bcl;
    public IPEndPoint EndPoint { get; }
    public ServerCounters Counters { get; } = new();
    internal ServerOptions Options { get; }
    internal bool IsShuttingDown => _shuttingDown;
    internal CancellationToken ReadStop => _stopReading.Token;

    /// <summary>Queues a request; false once the channel is completed (shutting down).</summary>
    internal bool TryQueue(BclRequest request) => _queue.Writer.TryWrite(request);

    internal void Remove(BclConnection connection) => _connections.TryRemove(connection, out _);

    private Task AcceptLoopAsync() => AcceptLoop.RunAsync(_listener, _stopAccepting.Token,
        refuse: () => _shuttingDown || _connections.Count >= Options.MaxConnections, Counters,
        start: socket =>
        {
            var connection = new BclConnection(this, socket);
            _connections.TryAdd(connection, 0);
            connection.Start();
        });

    private async Task WorkerAsync()
    {
        await foreach (var request in _queue.Reader.ReadAllAsync().ConfigureAwait(false))
        {
            Status status;
            byte[] answer = [];
            if (DateTime.UtcNow.Ticks >= Interlocked.Read(ref _drainDeadlineTicks))
            {
                status = Status.Busy;
                Counters.CountShutdownBusy();
            }
            else if (request.Deadline is { } deadline && DateTime.UtcNow > deadline)
            {
                status = Status.Expired;
            }
            else
            {
                try
                {
                    answer = new byte[RequestHandler.AnswerSize(request.Op, request.Payload.Length)];
                    RequestHandler.Execute(request.Op, request.Payload, answer, ManagedRecordBatch.Instance);
                    status = Status.Ok;
                }
                catch (Exception e) when (e is not OutOfMemoryException)
                {
                    status = Status.Error;
                    answer = [];
                }
            }
            var frame = new byte[Frame.ResponseSize(answer.Length)];
            Frame.WriteResponse(frame, request.Id, status, answer);
            await request.Connection.SendAsync(frame, status, fromQueue: true).ConfigureAwait(false);
        }
    }

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
        _shuttingDown = true;
        // The drain deadline runs from the call, before anything here awaits: on a starved ThreadPool the awaits below
        // can take a second or more, and the deadline must not stretch with them.
        Interlocked.Exchange(ref _drainDeadlineTicks, (DateTime.UtcNow + drain).Ticks);
        int open = _connections.Count;
        await _stopAccepting.CancelAsync().ConfigureAwait(false);
        _listener.Dispose();
        await _acceptLoop.ConfigureAwait(false);
        _queue.Writer.TryComplete();
        await Task.WhenAll(_workers).ConfigureAwait(false);
        await _stopReading.CancelAsync().ConfigureAwait(false);
        await Task.WhenAll(_connections.Keys.Select(c => c.Completion)).WaitAsync(TimeSpan.FromSeconds(10)).ConfigureAwait(false);
        return new ShutdownReport(ServerStats.Capture("bcl", Counters), Stopwatch.GetElapsedTime(start), open);
    }

    public async ValueTask DisposeAsync()
    {
        await ShutdownAsync(TimeSpan.FromSeconds(1)).ConfigureAwait(false);
        _stopAccepting.Dispose();
        _stopReading.Dispose();
    }
}

/// <summary>A queued request of the BCL build: a new object and payload array per frame.</summary>
internal sealed record BclRequest(BclConnection Connection, long Id, Op Op, byte[] Payload, DateTime? Deadline);
