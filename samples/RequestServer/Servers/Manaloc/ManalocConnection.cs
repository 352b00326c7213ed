using System.Net.Sockets;
using System.Text;
using RequestServer.Protocol;

namespace RequestServer.Servers.Manaloc;

/// <summary>
/// One client connection of the Manaloc build: an async reader that parses frames in place in a pooled
/// buffer, posts valid requests within the connection's share, and answers the rest (busy, error, stats)
/// itself, batched into one send per read.
/// </summary>
/// <remarks>
/// Sends: the reader's batch and each worker's answer go out under <c>_sendLock</c>, whole frames only,
/// so answers never interleave. Share: <c>_inFlight</c> is incremented (interlocked) before a post and
/// decremented by the worker after its answer is written; the reader alone increments, so its check
/// against the share cannot be overtaken, and the close waits until it is back to zero.
/// </remarks>
internal sealed class ManalocConnection
{
    private static readonly byte[] BadLengthReason = Encoding.UTF8.GetBytes("bad frame length");
    private readonly ManalocServer _server;
    private readonly Socket _socket;
    private readonly Lock _sendLock = new();
    private readonly byte[] _receive;
    private readonly byte[] _batch;
    private readonly long[] _batchCounts = new long[4]; // answers by status waiting in _batch
    private int _batchLength;
    private int _inFlight;
    private bool _broken; // guarded by _sendLock

    public ManalocConnection(ManalocServer server, Socket socket)
    {
        _server = server;
        _socket = socket;
        _socket.NoDelay = true;
        _socket.SendTimeout = (int)server.Options.SendTimeout.TotalMilliseconds;
        _receive = server.Buffers.Rent(2 * Frame.MaxRequestFrame);
        _batch = server.Buffers.Rent(2 * Frame.MaxResponseFrame);
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
                int consumed = ProcessFrames(_receive.AsSpan(0, filled), out bool malformed);
                FlushBatch();
                if (malformed) break;
                filled -= consumed;
                if (filled > 0 && consumed > 0) _receive.AsSpan(consumed, filled).CopyTo(_receive);
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

    private int ProcessFrames(ReadOnlySpan<byte> data, out bool malformed)
    {
        malformed = false;
        int consumed = 0;
        while (true)
        {
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
                Append(header.Id, Status.Ok, ServerStats.Capture("manaloc", _server.Counters).ToJsonUtf8(), counted: false);
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

    private bool TryPost(in RequestHeader header, ReadOnlySpan<byte> payload)
    {
        var request = _server.Requests.Rent();
        request.Init(this, header, payload);
        Interlocked.Increment(ref _inFlight);
        if (_server.Dispatcher.TryPost(request.Run)) return true;
        Interlocked.Decrement(ref _inFlight);
        request.Recycle();
        return false;
    }

    /// <summary>Adds an answer to this read's batch (flushing first when it would not fit).</summary>
    private void Append(long id, Status status, ReadOnlySpan<byte> payload, bool counted)
    {
        if (_batchLength + Frame.ResponseSize(payload.Length) > _batch.Length) FlushBatch();
        _batchLength += Frame.WriteResponse(_batch.AsSpan(_batchLength), id, status, payload);
        if (counted) _batchCounts[(int)status]++;
    }

    private void FlushBatch()
    {
        if (_batchLength == 0) return;
        bool sent = Send(_batch.AsSpan(0, _batchLength));
        for (int s = 0; s < _batchCounts.Length; s++)
        {
            for (long i = 0; i < _batchCounts[s]; i++)
            {
                if (sent) _server.Counters.CountAnswered((Status)s);
                else _server.Counters.CountUnanswered();
            }
            _batchCounts[s] = 0;
        }
        _batchLength = 0;
    }

    /// <summary>A worker's answer: written whole under the send lock, counted, and the share slot given back.</summary>
    public void Answer(ReadOnlySpan<byte> frame, Status status)
    {
        if (Send(frame)) _server.Counters.CountAnswered(status);
        else _server.Counters.CountUnanswered();
        Interlocked.Decrement(ref _inFlight);
    }

    private bool Send(ReadOnlySpan<byte> frame)
    {
        lock (_sendLock)
        {
            if (_broken) return false;
            try
            {
                while (!frame.IsEmpty) frame = frame[_socket.Send(frame)..];
                return true;
            }
            catch (Exception e) when (e is SocketException or ObjectDisposedException)
            {
                _broken = true; // the client is gone or stopped reading past the send timeout
                return false;
            }
        }
    }

    private async Task CloseAsync()
    {
        // Accepted requests of this connection are still queued or running: their answers go out
        // first (the dispatcher drains or hands them back at shutdown, so this wait is bounded).
        while (Volatile.Read(ref _inFlight) > 0) await Task.Delay(1).ConfigureAwait(false);
        lock (_sendLock)
        {
            _broken = true;
            try { _socket.Shutdown(SocketShutdown.Both); } catch (SocketException) { /* already reset */ }
            _socket.Dispose();
        }
        _server.Buffers.Return(_receive);
        _server.Buffers.Return(_batch);
        _server.Remove(this);
    }
}
