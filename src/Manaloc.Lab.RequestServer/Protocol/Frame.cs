using System.Buffers.Binary;

namespace Manaloc.Lab.RequestServer.Protocol;

/// <summary>What a request asks the server to do.</summary>
public enum Op : byte
{
    /// <summary>Answer with the request's payload.</summary>
    Echo = 0,
    /// <summary>Run a CPU-bound loop; the payload is the iteration count (int32), the answer its 8-byte checksum.</summary>
    Compute = 1,
    /// <summary>Allocate, fill and sum a batch of records; the payload is the record count (int32), the answer an 8-byte checksum.</summary>
    Records = 2,
    /// <summary>Control: the server's counters and process figures as UTF-8 JSON (<see cref="ServerStats"/>); not part of the load.</summary>
    Stats = 255,
}

/// <summary>How the server answered a request.</summary>
public enum Status : byte
{
    /// <summary>Done; the payload is the answer.</summary>
    Ok = 0,
    /// <summary>Refused without running: the server is shutting down (or, with busy-over-share, the connection is at its share).</summary>
    Busy = 1,
    /// <summary>Its deadline passed before work started.</summary>
    Expired = 2,
    /// <summary>Malformed (unknown op, bad payload); the payload is a UTF-8 reason. Id 0 with a close: the stream itself was bad.</summary>
    Error = 3,
}

/// <summary>A parsed request header; the payload follows it in the frame.</summary>
/// <param name="Id">Chosen by the client, echoed in the response.</param>
/// <param name="DeadlineMicros">Budget in microseconds from the moment the server reads the frame; 0 = none.</param>
/// <param name="Op">The operation (may be an undefined value: the server answers <see cref="Status.Error"/>).</param>
public readonly record struct RequestHeader(long Id, int DeadlineMicros, Op Op);

/// <summary>What <see cref="Frame.TryReadRequest"/> found at the start of a buffer.</summary>
public enum ParseResult
{
    /// <summary>A whole frame.</summary>
    Complete,
    /// <summary>Not a whole frame yet: read more.</summary>
    Incomplete,
    /// <summary>The length prefix is impossible (too small or over the limit): the stream cannot be resynchronised.</summary>
    BadLength,
}

/// <summary>
/// The wire format, little-endian. Request: <c>length:int32 | id:int64 | deadlineMicros:int32 | op:uint8 | payload</c>;
/// response: <c>length:int32 | id:int64 | status:uint8 | payload</c>. <c>length</c> counts the bytes after itself.
/// </summary>
/// <remarks>
/// A request's length must be at least <see cref="RequestHeaderSize"/> and at most
/// <see cref="RequestHeaderSize"/> + <see cref="MaxPayload"/>; anything else is a bad length, which no reader
/// can skip safely, so the server answers once with id 0 and closes. Every other defect (unknown op, wrong
/// payload size, negative deadline) leaves the frame boundaries intact and gets an <see cref="Status.Error"/>
/// response with the request's id.
/// </remarks>
public static class Frame
{
    /// <summary>Bytes of the length prefix.</summary>
    public const int LengthSize = 4;
    /// <summary>Bytes of a request header after the length: id, deadline, op.</summary>
    public const int RequestHeaderSize = 8 + 4 + 1;
    /// <summary>Bytes of a response header after the length: id, status.</summary>
    public const int ResponseHeaderSize = 8 + 1;
    /// <summary>Largest payload of a request or response (64 KiB).</summary>
    public const int MaxPayload = 64 * 1024;
    /// <summary>Largest whole request frame.</summary>
    public const int MaxRequestFrame = LengthSize + RequestHeaderSize + MaxPayload;
    /// <summary>Largest whole response frame.</summary>
    public const int MaxResponseFrame = LengthSize + ResponseHeaderSize + MaxPayload;

    /// <summary>Bytes of a request frame with <paramref name="payloadLength"/> bytes of payload.</summary>
    public static int RequestSize(int payloadLength) => LengthSize + RequestHeaderSize + payloadLength;

    /// <summary>Bytes of a response frame with <paramref name="payloadLength"/> bytes of payload.</summary>
    public static int ResponseSize(int payloadLength) => LengthSize + ResponseHeaderSize + payloadLength;

    /// <summary>Writes a request frame; returns its size.</summary>
    /// <exception cref="ArgumentException">The payload is over <see cref="MaxPayload"/> or the destination too small.</exception>
    public static int WriteRequest(Span<byte> destination, in RequestHeader header, ReadOnlySpan<byte> payload)
    {
        CheckPayload(payload.Length, destination.Length, RequestSize(payload.Length));
        BinaryPrimitives.WriteInt32LittleEndian(destination, RequestHeaderSize + payload.Length);
        BinaryPrimitives.WriteInt64LittleEndian(destination[4..], header.Id);
        BinaryPrimitives.WriteInt32LittleEndian(destination[12..], header.DeadlineMicros);
        destination[16] = (byte)header.Op;
        payload.CopyTo(destination[17..]);
        return RequestSize(payload.Length);
    }

    /// <summary>Writes a response frame; returns its size.</summary>
    /// <exception cref="ArgumentException">The payload is over <see cref="MaxPayload"/> or the destination too small.</exception>
    public static int WriteResponse(Span<byte> destination, long id, Status status, ReadOnlySpan<byte> payload)
    {
        CheckPayload(payload.Length, destination.Length, ResponseSize(payload.Length));
        WriteResponseHeader(destination, id, status, payload.Length);
        payload.CopyTo(destination[13..]);
        return ResponseSize(payload.Length);
    }

    /// <summary>Writes a response's length and header for a payload the caller writes at offset 13.</summary>
    public static void WriteResponseHeader(Span<byte> destination, long id, Status status, int payloadLength)
    {
        BinaryPrimitives.WriteInt32LittleEndian(destination, ResponseHeaderSize + payloadLength);
        BinaryPrimitives.WriteInt64LittleEndian(destination[4..], id);
        destination[12] = (byte)status;
    }

    /// <summary>Reads the request frame at the start of <paramref name="buffer"/>, if it holds a whole one.</summary>
    /// <param name="buffer">Received bytes.</param>
    /// <param name="header">The header of a complete frame.</param>
    /// <param name="payload">Where the payload lies in <paramref name="buffer"/> (start, length).</param>
    /// <param name="frameSize">Bytes of the whole frame, to consume.</param>
    public static ParseResult TryReadRequest(ReadOnlySpan<byte> buffer, out RequestHeader header, out Range payload, out int frameSize)
    {
        header = default;
        payload = default;
        frameSize = 0;
        if (buffer.Length < LengthSize) return ParseResult.Incomplete;
        int length = BinaryPrimitives.ReadInt32LittleEndian(buffer);
        if (length is < RequestHeaderSize or > RequestHeaderSize + MaxPayload) return ParseResult.BadLength;
        if (buffer.Length < LengthSize + length) return ParseResult.Incomplete;
        header = new RequestHeader(
            BinaryPrimitives.ReadInt64LittleEndian(buffer[4..]),
            BinaryPrimitives.ReadInt32LittleEndian(buffer[12..]),
            (Op)buffer[16]);
        payload = new Range(17, LengthSize + length);
        frameSize = LengthSize + length;
        return ParseResult.Complete;
    }

    /// <summary>Reads the response frame at the start of <paramref name="buffer"/>, if it holds a whole one.</summary>
    /// <exception cref="InvalidDataException">The length prefix is impossible (a broken server or stream).</exception>
    public static bool TryReadResponse(ReadOnlySpan<byte> buffer, out long id, out Status status, out Range payload, out int frameSize)
    {
        id = 0;
        status = default;
        payload = default;
        frameSize = 0;
        if (buffer.Length < LengthSize) return false;
        int length = BinaryPrimitives.ReadInt32LittleEndian(buffer);
        if (length is < ResponseHeaderSize or > ResponseHeaderSize + MaxPayload)
        {
            throw new InvalidDataException($"Response length {length} is outside {ResponseHeaderSize}..{ResponseHeaderSize + MaxPayload}.");
        }
        if (buffer.Length < LengthSize + length) return false;
        id = BinaryPrimitives.ReadInt64LittleEndian(buffer[4..]);
        status = (Status)buffer[12];
        payload = new Range(13, LengthSize + length);
        frameSize = LengthSize + length;
        return true;
    }

    private static void CheckPayload(int payloadLength, int destinationLength, int needed)
    {
        if (payloadLength > MaxPayload) throw new ArgumentException($"A payload holds at most {MaxPayload} bytes, not {payloadLength}.", nameof(payloadLength));
        if (destinationLength < needed) throw new ArgumentException($"The frame needs {needed} bytes; the destination holds {destinationLength}.", nameof(destinationLength));
    }
}
