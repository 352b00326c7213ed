using System.Buffers.Binary;

namespace Manaloc.Lab.RequestServer.Protocol;

/// <summary>Runs the record op's allocation: managed arrays in the BCL and Kestrel builds, native records in the Manaloc build.</summary>
public interface IRecordBatch
{
    /// <summary>Allocates <paramref name="count"/> records, fills record i with (i, i², i/2), frees them and returns Σ(x + y) + ⌊Σ weight⌋.</summary>
    long FillAndSum(int count);
}

/// <summary>The handler logic every build shares: validation and the ops themselves.</summary>
public static class RequestHandler
{
    /// <summary>Largest <see cref="Op.Compute"/> iteration count.</summary>
    public const int MaxComputeIterations = 10_000_000;
    /// <summary>Largest <see cref="Op.Records"/> record count.</summary>
    public const int MaxRecords = 65_536;
    /// <summary>Bytes of a compute or records answer: one int64 checksum.</summary>
    public const int ChecksumSize = 8;

    /// <summary>Why a request with an intact frame cannot be run, or null when it can (static strings: no allocation).</summary>
    public static string? Validate(in RequestHeader header, ReadOnlySpan<byte> payload)
    {
        if (header.DeadlineMicros < 0) return "negative deadline";
        switch (header.Op)
        {
            case Op.Echo:
                return null;
            case Op.Compute:
                if (payload.Length != 4) return "compute needs a 4-byte iteration count";
                return BinaryPrimitives.ReadInt32LittleEndian(payload) is >= 0 and <= MaxComputeIterations ? null : "compute iterations out of range";
            case Op.Records:
                if (payload.Length != 4) return "records needs a 4-byte record count";
                return BinaryPrimitives.ReadInt32LittleEndian(payload) is >= 1 and <= MaxRecords ? null : "record count out of range";
            case Op.Stats:
                return payload.IsEmpty ? null : "stats takes no payload";
            default:
                return "unknown op";
        }
    }

    /// <summary>Bytes of the answer to a valid request of <paramref name="op"/> with <paramref name="payloadLength"/> bytes of payload.</summary>
    public static int AnswerSize(Op op, int payloadLength) => op == Op.Echo ? payloadLength : ChecksumSize;

    /// <summary>Runs a validated load op (not <see cref="Op.Stats"/>), writing its answer; returns the answer's length.</summary>
    public static int Execute(Op op, ReadOnlySpan<byte> payload, Span<byte> answer, IRecordBatch records)
    {
        switch (op)
        {
            case Op.Echo:
                payload.CopyTo(answer);
                return payload.Length;
            case Op.Compute:
                BinaryPrimitives.WriteInt64LittleEndian(answer, Compute(BinaryPrimitives.ReadInt32LittleEndian(payload)));
                return ChecksumSize;
            case Op.Records:
                BinaryPrimitives.WriteInt64LittleEndian(answer, records.FillAndSum(BinaryPrimitives.ReadInt32LittleEndian(payload)));
                return ChecksumSize;
            default:
                throw new InvalidOperationException($"Op {op} is not a load op; validate first.");
        }
    }

    /// <summary>The CPU-bound op: <paramref name="iterations"/> rounds of xorshift64 (about a nanosecond each).</summary>
    public static long Compute(int iterations)
    {
        ulong x = 0x9E3779B97F4A7C15;
        for (int i = 0; i < iterations; i++)
        {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        return (long)x;
    }

    /// <summary>The checksum <see cref="IRecordBatch.FillAndSum"/> must return for <paramref name="count"/> records.</summary>
    public static long ExpectedRecordChecksum(int count)
    {
        long sum = 0;
        double weight = 0;
        for (long i = 0; i < count; i++)
        {
            sum += i + i * i;
            weight += i * 0.5;
        }
        return sum + (long)weight;
    }
}

/// <summary>The record op with a managed array of structs per request: what the BCL and Kestrel builds do.</summary>
public sealed class ManagedRecordBatch : IRecordBatch
{
    /// <summary>The shared instance (stateless).</summary>
    public static ManagedRecordBatch Instance { get; } = new();

    /// <inheritdoc/>
    public long FillAndSum(int count)
    {
        var points = new Point[count];
        for (int i = 0; i < points.Length; i++)
        {
            points[i] = new Point { X = i, Y = (long)i * i, Weight = i * 0.5 };
        }
        long sum = 0;
        double weight = 0;
        foreach (ref readonly var p in points.AsSpan())
        {
            sum += p.X + p.Y;
            weight += p.Weight;
        }
        return sum + (long)weight;
    }

    private struct Point
    {
        public long X;
        public long Y;
        public double Weight;
    }
}
