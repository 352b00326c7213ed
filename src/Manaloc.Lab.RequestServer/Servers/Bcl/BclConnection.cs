using System.Buffers;
using System.IO.Pipelines;
using System.Net.Sockets;
using System.Text;
using Manaloc.Lab.RequestServer.Protocol;

namespace Manaloc.Lab.RequestServer.Servers.Bcl;

/// <summary>One client connection of the BCL build: a Pipelines reader copying each frame into a new array and queueing it.</summary>
/// <remarks>Sends are serialised by a <see cref="SemaphoreSlim"/>; <c>_inFlight</c> counts queued requests so the close waits for their answers.</remarks>
internal sealed class BclConnection
{
    private readonly BclServer _server;
    private readonly Socket _socket;
    private readonly SemaphoreSlim _sendLock = new(1, 1);
    private int _inFlight;
    private bool _broken;

    public BclConnection(BclServer server, Socket socket)
    {
        _server = server;
        _socket = socket;
        _socket.NoDelay = true;
    }

    public Task Completion { get; private set; } = Task.CompletedTask;

    public void Start() => Completion = Task.Run(RunAsync);

    private async Task RunAsync()
    {
        var reader = PipeReader.Create(new NetworkStream(_socket, ownsSocket: false));
        try
        {
            while (true)
            {
                var result = await reader.ReadAsync(_server.ReadStop).ConfigureAwait(false);
                var buffer = result.Buffer;
                bool malformed = await ProcessFramesAsync(buffer, out var rest).ConfigureAwait(false);
                if (malformed) break;
                reader.AdvanceTo(rest.Start, rest.End);
                if (result.IsCompleted)
                {
                    if (!rest.IsEmpty) _server.Counters.CountTruncated();
                    break;
                }
            }
        }
        catch (Exception e) when (e is OperationCanceledException or IOException or SocketException or ObjectDisposedException)
        {
            // Shutdown's read stop, or the client went away.
        }
        finally
        {
            await reader.CompleteAsync().ConfigureAwait(false);
            while (Volatile.Read(ref _inFlight) > 0) await Task.Delay(1).ConfigureAwait(false);
            await _sendLock.WaitAsync().ConfigureAwait(false);
            _broken = true;
            _sendLock.Release();
            await SocketClose.LingeringCloseAsync(_socket, new byte[4096]).ConfigureAwait(false);
            _server.Remove(this);
        }
    }

    /// <summary>Takes every whole frame off <paramref name="buffer"/>; true when the stream is malformed.</summary>
    private ValueTask<bool> ProcessFramesAsync(ReadOnlySequence<byte> buffer, out ReadOnlySequence<byte> rest)
    {
        List<(long Id, Status Status, byte[] Payload, bool Counted)>? inline = null;
        bool malformed = false;
        Span<byte> prefix = stackalloc byte[Frame.LengthSize];
        while (true)
        {
            if (buffer.Length < Frame.LengthSize) break;
            buffer.Slice(0, Frame.LengthSize).CopyTo(prefix);
            int length = System.Buffers.Binary.BinaryPrimitives.ReadInt32LittleEndian(prefix);
            if (length is < Frame.RequestHeaderSize or > Frame.RequestHeaderSize + Frame.MaxPayload)
            {
                _server.Counters.CountMalformedStream();
                (inline ??= []).Add((0, Status.Error, Encoding.UTF8.GetBytes("bad frame length"), false));
                malformed = true;
                break;
            }
            if (buffer.Length < Frame.LengthSize + length) break;
            byte[] frame = buffer.Slice(0, Frame.LengthSize + length).ToArray();
            buffer = buffer.Slice(Frame.LengthSize + length);
            Frame.TryReadRequest(frame, out var header, out var range, out _);
            byte[] payload = frame[range];
            string? error = RequestHandler.Validate(header, payload);
            if (header.Op == Op.Stats && error is null)
            {
                _server.Counters.CountControl();
                (inline ??= []).Add((header.Id, Status.Ok, ServerStats.CaptureJsonUtf8("bcl", _server.Counters), false));
                continue;
            }
            _server.Counters.CountReceived();
            if (error is not null)
            {
                (inline ??= []).Add((header.Id, Status.Error, Encoding.UTF8.GetBytes(error), true));
                continue;
            }
            DateTime? deadline = header.DeadlineMicros == 0 ? null : DateTime.UtcNow.AddTicks(header.DeadlineMicros * 10L);
            Interlocked.Increment(ref _inFlight);
            if (_server.IsShuttingDown || !_server.TryQueue(new BclRequest(this, header.Id, header.Op, payload, deadline)))
            {
                Interlocked.Decrement(ref _inFlight);
                (inline ??= []).Add((header.Id, Status.Busy, [], true));
            }
        }
        rest = buffer;
        return inline is null ? ValueTask.FromResult(malformed) : SendInlineAsync(inline, malformed);
    }

    private async ValueTask<bool> SendInlineAsync(List<(long Id, Status Status, byte[] Payload, bool Counted)> answers, bool malformed)
    {
        foreach (var (id, status, payload, counted) in answers)
        {
            var frame = new byte[Frame.ResponseSize(payload.Length)];
            Frame.WriteResponse(frame, id, status, payload);
            if (counted) await SendAsync(frame, status, fromQueue: false).ConfigureAwait(false);
            else await SendUncountedAsync(frame).ConfigureAwait(false);
        }
        return malformed;
    }

    /// <summary>Writes an answer, counts it (or counts it unanswered when the connection is gone).</summary>
    public async Task SendAsync(byte[] frame, Status status, bool fromQueue)
    {
        if (await SendUncountedAsync(frame).ConfigureAwait(false)) _server.Counters.CountAnswered(status);
        else _server.Counters.CountUnanswered();
        if (fromQueue) Interlocked.Decrement(ref _inFlight);
    }

    private async Task<bool> SendUncountedAsync(byte[] frame)
    {
        await _sendLock.WaitAsync().ConfigureAwait(false);
        try
        {
            if (_broken) return false;
            int sent = 0;
            while (sent < frame.Length) sent += await _socket.SendAsync(frame.AsMemory(sent), SocketFlags.None).ConfigureAwait(false);
            return true;
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
            _broken = true;
            return false;
        }
        finally
        {
            _sendLock.Release();
        }
    }
}
