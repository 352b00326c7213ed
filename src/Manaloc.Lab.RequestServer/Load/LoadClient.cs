using System.Buffers.Binary;
using System.Diagnostics;
using System.Net.Sockets;
using HdrHistogram;
using Manaloc.Lab.RequestServer.Protocol;

namespace Manaloc.Lab.RequestServer.Load;

/// <summary>
/// One client connection of a load run. The sending thread writes request <c>k</c> with id <c>k</c> after
/// storing its intended send time; the receive loop matches each answer to its id, records the latency from
/// that intended time, counts the status and checks the answer.
/// </summary>
/// <remarks>
/// Memory ordering: the sender stores <c>_intended[k]</c> (volatile write) before the send system call
/// that carries request k; the answer to k can only arrive after the server read that request, so the
/// receive loop's read of <c>_intended[k]</c> follows the store. <c>_sent</c> and <c>_answered</c> are
/// interlocked. A pipelined client's window is a semaphore: one slot taken per send, given back per answer.
/// </remarks>
internal sealed class LoadClient : IDisposable
{
    private readonly Socket _socket;
    private readonly LoadOptions _options;
    private readonly long[] _intended;     // Stopwatch timestamp per id
    private readonly bool[] _seen;         // per id: answered
    private readonly long[] _statusCounts = new long[4];
    private readonly byte[] _sendBuffer;
    private readonly long _expectedCompute;
    private readonly long _expectedRecords;
    private long _sent;
    private long _answered;
    private long _violations;
    private bool _closed; // a send failed: the server is gone

    public LoadClient(LoadOptions options, bool polite, long expectedCompute, long expectedRecords)
    {
        _options = options;
        IsPolite = polite;
        _expectedCompute = expectedCompute;
        _expectedRecords = expectedRecords;
        int capacity = polite ? options.MaxPoliteRequests : options.MaxPipelinedRequests;
        _intended = new long[capacity];
        _seen = new bool[capacity];
        _sendBuffer = new byte[Frame.RequestSize(Math.Max(options.EchoBytes, 4)) * 64];
        Window = polite ? null : new SemaphoreSlim(options.PipelineWindow, options.PipelineWindow);
        _socket = LoopbackSocket.Connect(options.Target);
    }

    public bool IsPolite { get; }
    public SemaphoreSlim? Window { get; }
    public LongHistogram Latency { get; } = new(1, 60_000_000, 3);
    public long Sent => Interlocked.Read(ref _sent);
    public long Outstanding => Interlocked.Read(ref _sent) - Interlocked.Read(ref _answered);
    public bool CanSend => !Volatile.Read(ref _closed) && Interlocked.Read(ref _sent) < _intended.Length;
    public long Violations => Interlocked.Read(ref _violations);
    public Task Receiving { get; private set; } = Task.CompletedTask;

    public void StartReceiving() => Receiving = Task.Run(ReceiveLoopAsync);

    /// <summary>Sends up to <paramref name="count"/> requests intended at <paramref name="intended"/>; returns how many went.</summary>
    public int Send(int count, long intended)
    {
        count = (int)Math.Min(count, _intended.Length - Interlocked.Read(ref _sent));
        int length = 0;
        long first = Interlocked.Read(ref _sent);
        Span<byte> payload = stackalloc byte[Math.Max(_options.EchoBytes, 4)];
        for (int i = 0; i < count; i++)
        {
            long id = first + i;
            var op = IsPolite ? (Op)(id % 3) : Op.Compute;
            int payloadLength = op == Op.Echo ? _options.EchoBytes : 4;
            if (op == Op.Echo) payload[..payloadLength].Fill((byte)id);
            else BinaryPrimitives.WriteInt32LittleEndian(payload, op == Op.Compute ? _options.ComputeIterations : _options.RecordCount);
            length += Frame.WriteRequest(_sendBuffer.AsSpan(length), new RequestHeader(id, _options.DeadlineMicros, op), payload[..payloadLength]);
            Volatile.Write(ref _intended[id], intended == 0 ? Stopwatch.GetTimestamp() : intended);
        }
        Interlocked.Add(ref _sent, count); // before the bytes leave: an answer never finds its id unsent
        var frames = _sendBuffer.AsSpan(0, length);
        try
        {
            while (!frames.IsEmpty) frames = frames[_socket.Send(frames)..];
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
            // The server closed the connection: these requests count as sent and, unanswered, as lost.
            Volatile.Write(ref _closed, true);
        }
        return count;
    }

    private async Task ReceiveLoopAsync()
    {
        var buffer = new byte[2 * Frame.MaxResponseFrame];
        int filled = 0;
        try
        {
            while (true)
            {
                int n = await _socket.ReceiveAsync(buffer.AsMemory(filled), SocketFlags.None).ConfigureAwait(false);
                if (n == 0) return;
                filled += n;
                int consumed = 0;
                while (Frame.TryReadResponse(buffer.AsSpan(consumed, filled - consumed), out long id, out var status, out var range, out int size))
                {
                    Account(id, status, buffer.AsSpan(consumed, size)[range]);
                    consumed += size;
                }
                filled -= consumed;
                if (filled > 0 && consumed > 0) buffer.AsSpan(consumed, filled).CopyTo(buffer);
            }
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException or InvalidDataException)
        {
            if (e is InvalidDataException) Interlocked.Increment(ref _violations);
        }
    }

    private void Account(long id, Status status, ReadOnlySpan<byte> payload)
    {
        long now = Stopwatch.GetTimestamp();
        if (id < 0 || id >= Interlocked.Read(ref _sent) || _seen[id] || (int)status > 3)
        {
            Interlocked.Increment(ref _violations);
            return;
        }
        _seen[id] = true;
        long micros = Math.Max(1, (now - Volatile.Read(ref _intended[id])) * 1_000_000 / Stopwatch.Frequency);
        Latency.RecordValue(Math.Min(micros, Latency.HighestTrackableValue));
        _statusCounts[(int)status]++;
        if (status == Status.Ok && !AnswerIsRight(id, payload)) Interlocked.Increment(ref _violations);
        Interlocked.Increment(ref _answered);
        Window?.Release();
    }

    private bool AnswerIsRight(long id, ReadOnlySpan<byte> payload)
    {
        var op = IsPolite ? (Op)(id % 3) : Op.Compute;
        if (op == Op.Echo) return payload.Length == _options.EchoBytes && (payload.IsEmpty || (payload[0] == (byte)id && payload[^1] == (byte)id));
        return payload.Length == 8 && BinaryPrimitives.ReadInt64LittleEndian(payload) == (op == Op.Compute ? _expectedCompute : _expectedRecords);
    }

    /// <summary>Counts after the receive loop ended (or the drain timed out).</summary>
    public Tally Tally()
    {
        long sent = Sent;
        long ok = Volatile.Read(ref _statusCounts[0]), busy = Volatile.Read(ref _statusCounts[1]);
        long expired = Volatile.Read(ref _statusCounts[2]), error = Volatile.Read(ref _statusCounts[3]);
        return new Tally(sent, ok, busy, expired, error, sent - ok - busy - expired - error);
    }

    /// <summary>Tells the server no more requests come (half-close); it answers what it read and closes.</summary>
    public void FinishSending()
    {
        try { _socket.Shutdown(SocketShutdown.Send); } catch (SocketException) { /* already closed */ }
    }

    public void Dispose()
    {
        _socket.Dispose();
        Window?.Dispose();
    }
}
