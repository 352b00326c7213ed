using System.Buffers;
using System.Buffers.Binary;
using System.Diagnostics;
using System.IO.Pipelines;
using System.Text;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Connections.Features;
using Manaloc.Lab.RequestServer.Protocol;

namespace Manaloc.Lab.RequestServer.Servers.Kestrel;

/// <summary>
/// The Kestrel builds' protocol handler: parses frames from the connection's <see cref="PipeReader"/>
/// (in place when a frame lies in one segment), writes each answer straight into the
/// <see cref="PipeWriter"/>'s memory, and flushes once per read. The kestrel build answers a read's frames
/// inline; kestrel-manaloc answers them in turns on its dispatcher (<see cref="FrameTurn"/>).
/// </summary>
internal sealed class FrameConnectionHandler(KestrelServerState state) : ConnectionHandler
{
    private static readonly byte[] BadLengthReason = Encoding.UTF8.GetBytes("bad frame length");

    public override async Task OnConnectedAsync(ConnectionContext connection)
    {
        state.Opened();
        state.Counters.CountConnection();
        var input = connection.Transport.Input;
        var output = connection.Transport.Output;
        var closeRequested = connection.Features.Get<IConnectionLifetimeNotificationFeature>()?.ConnectionClosedRequested ?? default;
        using var registration = closeRequested.Register(() => input.CancelPendingRead());
        var turn = state.Build == ServerBuild.KestrelManaloc ? new FrameTurn(state, output) : null;
        var pending = turn?.Pending ?? new long[4]; // answers by status written since the last flush
        try
        {
            while (true)
            {
                var result = await input.ReadAsync().ConfigureAwait(false);
                long readAt = Stopwatch.GetTimestamp(); // every frame of this read was read now: deadlines count from here
                var buffer = result.Buffer;
                bool malformed;
                if (turn is null)
                {
                    malformed = AnswerFrames(state, ref buffer, output, pending, readAt, until: long.MaxValue).Malformed;
                }
                else
                {
                    malformed = await turn.RunAsync(buffer, readAt).ConfigureAwait(false);
                    buffer = buffer.Slice(turn.Consumed);
                }
                input.AdvanceTo(buffer.Start, buffer.End);
                var flush = await output.FlushAsync().ConfigureAwait(false);
                // A completed reader means Kestrel aborted the connection (the drain deadline passed): not sent.
                Settle(state, pending, answered: !flush.IsCanceled && !flush.IsCompleted);
                if (malformed) break;
                if (result.IsCompleted)
                {
                    if (!buffer.IsEmpty) state.Counters.CountTruncated();
                    break;
                }
                if (result.IsCanceled || closeRequested.IsCancellationRequested) break;
            }
        }
        catch (Exception e) when (e is ConnectionResetException or ConnectionAbortedException or IOException or InvalidOperationException)
        {
            Settle(state, pending, answered: false); // written into the pipe but never flushed to the client
        }
        finally
        {
            state.Closed();
        }
    }

    /// <summary>Counts the answers written since the last flush (by status, in <paramref name="pending"/>) as sent or not, and clears them.</summary>
    private static void Settle(KestrelServerState state, long[] pending, bool answered)
    {
        for (int s = 0; s < pending.Length; s++)
        {
            for (long i = 0; i < pending[s]; i++)
            {
                if (answered) state.Counters.CountAnswered((Status)s);
                else state.Counters.CountUnanswered();
            }
            pending[s] = 0;
        }
    }

    /// <summary>
    /// Answers the whole frames in <paramref name="buffer"/>, leaving the rest in it, until the timestamp
    /// <paramref name="until"/> (checked after each frame; <see cref="long.MaxValue"/>: every frame): (done, malformed), done
    /// when no whole frame is left. The kestrel build and kestrel-manaloc's turns both read frames through it.
    /// </summary>
    internal static (bool Done, bool Malformed) AnswerFrames(KestrelServerState state, ref ReadOnlySequence<byte> buffer, PipeWriter output, long[] pending, long readAt, long until)
    {
        byte[]? copy = null;
        try
        {
            while (buffer.Length >= Frame.LengthSize)
            {
                ReadOnlySpan<byte> first = buffer.FirstSpan;
                if (first.Length < buffer.Length)
                {
                    // More segments follow: when this frame (its length prefix says how long) spans them, parse it from a
                    // contiguous copy of that frame alone, not of everything read after it.
                    int frame = FrameBytes(buffer);
                    if (first.Length < frame)
                    {
                        copy ??= ArrayPool<byte>.Shared.Rent(Frame.MaxRequestFrame);
                        int take = (int)Math.Min(buffer.Length, frame);
                        buffer.Slice(0, take).CopyTo(copy);
                        first = copy.AsSpan(0, take);
                    }
                }
                var parsed = Frame.TryReadRequest(first, out var header, out var range, out int size);
                if (parsed == ParseResult.Incomplete) return (true, false);
                if (parsed == ParseResult.BadLength)
                {
                    state.Counters.CountMalformedStream();
                    Write(output, 0, Status.Error, BadLengthReason);
                    return (true, true);
                }
                Answer(state, header, first.Slice(0, size)[range], output, pending, readAt);
                buffer = buffer.Slice(size);
                if (until != long.MaxValue && Stopwatch.GetTimestamp() >= until) return (buffer.Length < Frame.LengthSize, false);
            }
            return (true, false);
        }
        finally
        {
            if (copy is not null) ArrayPool<byte>.Shared.Return(copy);
        }
    }

    /// <summary>
    /// The bytes of the frame at the start of <paramref name="buffer"/> (at least <see cref="Frame.LengthSize"/> long): its
    /// length prefix and what the prefix declares, or the prefix alone when the declared length is impossible (the parse
    /// then reports it as malformed from the prefix).
    /// </summary>
    private static int FrameBytes(in ReadOnlySequence<byte> buffer)
    {
        Span<byte> prefix = stackalloc byte[Frame.LengthSize];
        buffer.Slice(0, Frame.LengthSize).CopyTo(prefix);
        int declared = BinaryPrimitives.ReadInt32LittleEndian(prefix);
        return declared is >= Frame.RequestHeaderSize and <= Frame.MaxRequestFrame - Frame.LengthSize ? Frame.LengthSize + declared : Frame.LengthSize;
    }

    /// <summary>
    /// Answers one request frame into <paramref name="output"/> (stats, a validation error, busy while shutting down, expired
    /// past its deadline, or the handler's answer) and counts its status in <paramref name="pending"/>; the kestrel build
    /// and kestrel-manaloc's turns both answer through it.
    /// </summary>
    private static void Answer(KestrelServerState state, in RequestHeader header, ReadOnlySpan<byte> payload, PipeWriter output, long[] pending, long readAt)
    {
        string? error = RequestHandler.Validate(header, payload);
        if (header.Op == Op.Stats && error is null)
        {
            state.Counters.CountControl();
            Write(output, header.Id, Status.Ok, ServerStats.CaptureJsonUtf8(KestrelRequestServer.NameOf(state.Build), state.Counters));
            return;
        }
        state.Counters.CountReceived();
        Status status;
        if (error is not null)
        {
            Write(output, header.Id, status = Status.Error, Encoding.UTF8.GetBytes(error));
        }
        else if (state.ShuttingDown)
        {
            Write(output, header.Id, status = Status.Busy, default);
        }
        else if (header.DeadlineMicros != 0 && Stopwatch.GetElapsedTime(readAt).TotalMicroseconds > header.DeadlineMicros)
        {
            Write(output, header.Id, status = Status.Expired, default);
        }
        else
        {
            int answerSize = RequestHandler.AnswerSize(header.Op, payload.Length);
            var span = output.GetSpan(Frame.ResponseSize(answerSize));
            int length;
            try
            {
                length = RequestHandler.Execute(header.Op, payload, span[(Frame.LengthSize + Frame.ResponseHeaderSize)..], ManagedRecordBatch.Instance);
                status = Status.Ok;
            }
            catch (Exception e) when (e is not OutOfMemoryException)
            {
                length = 0;
                status = Status.Error;
            }
            Frame.WriteResponseHeader(span, header.Id, status, length);
            output.Advance(Frame.ResponseSize(length));
        }
        pending[(int)status]++;
    }

    private static void Write(PipeWriter output, long id, Status status, ReadOnlySpan<byte> payload)
    {
        var span = output.GetSpan(Frame.ResponseSize(payload.Length));
        output.Advance(Frame.WriteResponse(span, id, status, payload));
    }
}
