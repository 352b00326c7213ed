using System.Diagnostics;
using System.Net.Sockets;
using System.Text;
using Manaloc.Threading;
using Manaloc.Lab.RequestServer.Protocol;

namespace Manaloc.Lab.RequestServer.Servers.Manaloc;

/// <summary>
/// One client connection of the Manaloc build: an async reader that parses frames in place in a pooled
/// buffer and queues valid requests on the connection while it is within its share (at it, the reader
/// stops reading until half of them have finished); the connection takes turns with the others on the
/// dispatcher, one request per turn, and the worker that ran a request sends its answer. The reader answers
/// busy (shutting down), error and stats itself, batched into one send per read.
/// </summary>
/// <remarks>
/// Hand-offs: one per request (the reader queues it, a worker runs it and writes the answer to the socket
/// itself through the connection's <see cref="AnswerWriter"/>, whose sends never block a worker). Answers are
/// appended as whole frames, so they never interleave. Share: <c>_inFlight</c> is incremented (interlocked)
/// before a request is queued and decremented once its answer is sent; the reader alone increments, so its
/// check against the share cannot be overtaken, and the close waits until it is zero.
/// </remarks>
internal sealed partial class ManalocConnection
{
    private const int ReceiveSlack = 16 * 1024;
    private const int BatchSize = 16 * 1024;
    /// <summary>A turn sends the answers waiting once this many bytes of them are (besides at <c>_resumeMark</c> answers, or when it leaves nothing queued).</summary>
    private const int FlushBytes = 16 * 1024;
    /// <summary>... or once the oldest answer held back has waited this long since its request started (a slow request's answer goes out at once).</summary>
    private static readonly long FlushAfterTicks = Stopwatch.Frequency / 1000; // 1 ms
    private static readonly byte[] BadLengthReason = Encoding.UTF8.GetBytes("bad frame length");
    private readonly ManalocServer _server;
    private readonly Socket _socket;
    private readonly byte[] _receive;
    private readonly byte[] _batch;
    private readonly long[] _batchCounts = new long[4]; // answers by status waiting in _batch
    private int _batchLength;
    private readonly ReusableValueTaskSource<bool> _shareFreed = new(runContinuationsAsynchronously: true);
    private readonly int _resumeMark; // a paused reader resumes once _inFlight is down to this; a turn flushes at this many answers
    private int _inFlight;
    private int _shareWaiter; // 1 while the reader waits for a share slot
    private readonly AnswerWriter _writer;
    private readonly Lock _localLock = new();
    private readonly PooledRequest?[] _local; // this connection's accepted requests, oldest at _localHead (guarded by _localLock)
    private int _localHead, _localCount;      // guarded by _localLock
    private bool _turnPosted;                 // guarded by _localLock; see RunTurn
    private long _heldSince;                  // Stopwatch timestamp: when the oldest answer held back started running; 0: none. Only the running turn touches it (the dispatcher's queue orders one turn before the next)
    private readonly Action _runTurn;         // made once: posting a turn allocates nothing

    public ManalocConnection(ManalocServer server, Socket socket)
    {
        _server = server;
        _socket = socket;
        _socket.NoDelay = true;
        // One whole frame plus room to read on: what is left after parsing is under one frame.
        _receive = server.Buffers.Rent(Frame.MaxRequestFrame + ReceiveSlack);
        // The reader's own answers (busy, error, stats) are small; a full batch goes to the writer and starts again.
        _batch = server.Buffers.Rent(BatchSize);
        _resumeMark = server.Options.ConnectionShare / 2;
        _writer = new AnswerWriter(socket, server.Buffers, server.Counters, ReleaseShare);
        _local = new PooledRequest?[server.Options.ConnectionShare];
        _runTurn = RunTurn;
    }

    public Task Completion { get; private set; } = Task.CompletedTask;

    public void Start() => Completion = RunAsync();

    private async Task RunAsync()
    {
        int filled = 0;
        try
        {
            while (true)
            {
                int n = await _socket.ReceiveAsync(_receive.AsMemory(filled), SocketFlags.None, _server.ReadStop).ConfigureAwait(false);
                if (n == 0)
                {
                    if (filled > 0) _server.Counters.CountTruncated();
                    break;
                }
                filled += n;
                while (true)
                {
                    int consumed = ProcessFrames(_receive.AsSpan(0, filled), out bool malformed, out bool overShare);
                    FlushBatch();
                    if (malformed) return;
                    filled -= consumed;
                    if (filled > 0 && consumed > 0) _receive.AsSpan(consumed, filled).CopyTo(_receive);
                    if (!overShare) break;
                    // The connection has its whole share queued, running or unsent: stop reading it until
                    // half of that has finished. Its further requests wait in its own socket (TCP pushes back on the sender);
                    // nobody else's do. Leftover bytes stay under one frame, so the next receive has room.
                    await WaitForShareAsync().ConfigureAwait(false);
                }
            }
        }
        catch (Exception e) when (e is OperationCanceledException or SocketException or ObjectDisposedException)
        {
            // Shutdown's read stop, or the client went away: what was read whole has been handled.
        }
        finally
        {
            await CloseAsync().ConfigureAwait(false);
        }
    }

    /// <summary>Completes once the connection is down to half its share; allocation-free (one reusable source).</summary>
    /// <remarks>
    /// Resuming at half, not at the first free slot, lets one wake-up read a batch instead of one frame.
    /// Dekker handshake, both sides interlocked (full fences): the reader publishes <c>_shareWaiter = 1</c>
    /// and then re-reads <c>_inFlight</c>; a worker decrements <c>_inFlight</c> and then swaps
    /// <c>_shareWaiter</c> to 0. At least one sees the other's write, so a wake-up is never lost, and
    /// exactly one of them (the one whose swap finds 1) ends the wait: the reader by taking its flag back,
    /// or the worker by completing the source.
    /// </remarks>
    private async ValueTask WaitForShareAsync()
    {
        Interlocked.Exchange(ref _shareWaiter, 1);
        if (Volatile.Read(ref _inFlight) <= _resumeMark && Interlocked.Exchange(ref _shareWaiter, 0) == 1)
        {
            return; // a slot freed before anyone saw the flag
        }
        await _shareFreed.Task.ConfigureAwait(false);
        _shareFreed.Reset();
    }

    private int ProcessFrames(ReadOnlySpan<byte> data, out bool malformed, out bool overShare)
    {
        malformed = false;
        overShare = false;
        int consumed = 0;
        while (true)
        {
            if (!_server.IsShuttingDown && !_server.Options.BusyOverShare && Volatile.Read(ref _inFlight) >= _server.Options.ConnectionShare)
            {
                overShare = true; // leave the rest unread until a slot frees
                return consumed;
            }
            var result = Frame.TryReadRequest(data[consumed..], out var header, out var range, out int size);
            if (result == ParseResult.Incomplete) return consumed;
            if (result == ParseResult.BadLength)
            {
                _server.Counters.CountMalformedStream();
                Append(0, Status.Error, BadLengthReason, counted: false);
                malformed = true;
                return consumed;
            }
            var payload = data.Slice(consumed, size)[range];
            consumed += size;
            string? error = RequestHandler.Validate(header, payload);
            if (header.Op == Op.Stats && error is null)
            {
                _server.Counters.CountControl();
                Append(header.Id, Status.Ok, ServerStats.CaptureJsonUtf8("manaloc", _server.Counters), counted: false);
                continue;
            }
            _server.Counters.CountReceived();
            if (error is not null)
            {
                Append(header.Id, Status.Error, Encoding.UTF8.GetBytes(error), counted: true);
            }
            else if (_server.IsShuttingDown || Volatile.Read(ref _inFlight) >= _server.Options.ConnectionShare || !TryPost(header, payload))
            {
                Append(header.Id, Status.Busy, default, counted: true);
            }
        }
    }

    /// <summary>Adds an answer to this read's batch (handing the batch to the writer first when it would not fit).</summary>
    private void Append(long id, Status status, ReadOnlySpan<byte> payload, bool counted)
    {
        if (_batchLength + Frame.ResponseSize(payload.Length) > _batch.Length) FlushBatch();
        _batchLength += Frame.WriteResponse(_batch.AsSpan(_batchLength), id, status, payload);
        if (counted) _batchCounts[(int)status]++;
    }

    private void FlushBatch()
    {
        if (_batchLength == 0) return;
        _writer.Append(_batch.AsSpan(0, _batchLength), _batchCounts, shareSlots: 0);
        Array.Clear(_batchCounts);
        _batchLength = 0;
        _writer.Flush();
    }

    /// <summary>A worker's answer: appended to the writer (sent by <see cref="RunTurn"/>'s flush), which counts it and gives the share slot back once sent.</summary>
    public void Answer(ReadOnlySpan<byte> frame, Status status) => _writer.Append(frame, status);

    /// <summary>Gives share slots back (the writer, once their answers are sent or failed).</summary>
    private void ReleaseShare(int slots)
    {
        if (Interlocked.Add(ref _inFlight, -slots) <= _resumeMark && Interlocked.Exchange(ref _shareWaiter, 0) == 1)
        {
            _shareFreed.SetResult(true); // see WaitForShareAsync
        }
    }

    private async Task CloseAsync()
    {
        // Accepted requests of this connection are still queued, running or unsent: their answers go
        // out first (the dispatcher drains or hands them back at shutdown, so this wait is bounded).
        // A send stuck past the send timeout means the client stopped reading: the socket is closed
        // under it, the send fails, and its answers are counted unanswered.
        while (Volatile.Read(ref _inFlight) > 0)
        {
            if (_writer.IsStuck(_server.Options.SendTimeout)) _socket.Dispose();
            await Task.Delay(1).ConfigureAwait(false);
        }
        _writer.Close();
        await _writer.Completion.ConfigureAwait(false);
        _writer.Dispose();
        await SocketClose.LingeringCloseAsync(_socket, _receive).ConfigureAwait(false);
        _server.Buffers.Return(_receive);
        _server.Buffers.Return(_batch);
        _server.Remove(this);
    }
}
