using System.Buffers;
using CsCheck;
using Manaloc.Buffers;

namespace Manaloc.Tests.Buffers;

/// <summary>
/// <see cref="PooledBufferStream"/> against <see cref="MemoryStream"/> as the model: random sequences of Write,
/// Read, Seek, SetLength, Position, WriteByte, ReadByte, Flush and Dispose, good and bad arguments, must give
/// the same results, the same exception types, and the same bytes, positions and lengths after every step.
/// </summary>
public sealed class PooledBufferStreamModelTests
{
    private enum Kind { Write, WriteSpan, Read, ReadSpan, Seek, SetLength, SetPosition, WriteByte, ReadByte, Flush, Dispose }

    /// <param name="A">Offset, length, position or value, by kind.</param>
    /// <param name="B">Buffer offset (Write/Read) or seek origin.</param>
    /// <param name="C">Count (Write/Read).</param>
    /// <param name="Size">Buffer size (Write/Read); -1 for a null buffer.</param>
    private sealed record Op(Kind Kind, long A, int B, int C, int Size)
    {
        public override string ToString() => $"{Kind}({A}, {B}, {C}, size {Size})";
    }

    // Small values mostly (segment boundaries at 4 KiB, 8 KiB, ...), some past int.MaxValue or negative for the
    // exception paths; never a valid position near int.MaxValue (a write there would need 2 GB of memory).
    private static readonly Gen<long> Place = Gen.Frequency(
        (6, Gen.Long[0, 20_000]),
        (2, Gen.OneOf(Gen.Const(4095L), Gen.Const(4096L), Gen.Const(4097L), Gen.Const(8192L), Gen.Const(12_288L))),
        (1, Gen.Long[-20_000, -1]),
        (1, Gen.OneOf(Gen.Const((long)int.MaxValue + 1), Gen.Const(long.MaxValue), Gen.Const(long.MinValue), Gen.Const(-1L))));

    private static readonly Gen<Op> Ops = Gen.Frequency(
        (5, Gen.Select(Gen.Int[0, 9000], Gen.Int[-1, 20], Gen.Int[-1, 9000], Gen.Frequency((20, Gen.Int[0, 9020]), (1, Gen.Const(-1))))
            .Select((seed, offset, count, size) => new Op(Kind.Write, seed, offset, count, size))),
        (3, Gen.Int[0, 9000].Select(size => new Op(Kind.WriteSpan, size, 0, size, size))),
        (4, Gen.Select(Gen.Int[-1, 20], Gen.Int[-1, 9000], Gen.Frequency((20, Gen.Int[0, 9020]), (1, Gen.Const(-1))))
            .Select((offset, count, size) => new Op(Kind.Read, 0, offset, count, size))),
        (2, Gen.Int[0, 9000].Select(size => new Op(Kind.ReadSpan, 0, 0, size, size))),
        (4, Gen.Select(Place, Gen.Frequency((10, Gen.Int[0, 2]), (1, Gen.Const(7)))).Select((offset, origin) => new Op(Kind.Seek, offset, origin, 0, 0))),
        (3, Place.Select(value => new Op(Kind.SetLength, value, 0, 0, 0))),
        (3, Place.Select(value => new Op(Kind.SetPosition, value, 0, 0, 0))),
        (3, Gen.Byte.Select(b => new Op(Kind.WriteByte, b, 0, 0, 0))),
        (3, Gen.Const(new Op(Kind.ReadByte, 0, 0, 0, 0))),
        (1, Gen.Const(new Op(Kind.Flush, 0, 0, 0, 0))),
        (1, Gen.Const(new Op(Kind.Dispose, 0, 0, 0, 0))));

    [Fact]
    public void Every_sequence_of_operations_behaves_as_on_a_MemoryStream()
        => Ops.Array[1, 60].Sample(ops =>
        {
            using var manager = new BufferManager(new BufferManagerOptions { Name = "stream-model", DebugMode = true });
            var model = new MemoryStream();
            var stream = new PooledBufferStream(manager);
            for (int i = 0; i < ops.Length; i++)
            {
                string expected = Apply(model, ops[i]);
                string actual = Apply(stream, ops[i]);
                if (expected != actual)
                    Assert.Fail($"step {i} {ops[i]}: MemoryStream gave {expected}, PooledBufferStream gave {actual}\n{string.Join("\n", ops.Take(i + 1))}");
                string modelState = State(model), state = State(stream);
                if (modelState != state)
                    Assert.Fail($"after step {i} {ops[i]}: MemoryStream is {modelState}, PooledBufferStream is {state}\n{string.Join("\n", ops.Take(i + 1))}");
            }
            if (model.CanRead)
            {
                Assert.Equal(model.ToArray(), stream.ToArray());
                Assert.Equal(model.ToArray(), stream.GetReadOnlySequence().ToArray());
            }
            stream.Dispose(); // every array back once: the debug-mode manager throws on a second return
        }, iter: 2000);

    /// <summary>Length and position (or the exception type reading them throws).</summary>
    private static string State(Stream s) => $"length {Try(() => s.Length)}, position {Try(() => s.Position)}, can read {s.CanRead}";

    private static string Try(Func<long> read)
    {
        try { return read().ToString(); }
        catch (Exception e) { return e.GetType().Name; }
    }

    private static string Apply(Stream s, Op op)
    {
        try
        {
            switch (op.Kind)
            {
                case Kind.Write:
                    s.Write(Buffer(op.Size, (int)op.A), op.B, op.C);
                    return "ok";
                case Kind.WriteSpan:
                    s.Write(Buffer(op.Size, op.Size));
                    return "ok";
                case Kind.Read:
                {
                    var buffer = op.Size < 0 ? null! : new byte[op.Size];
                    int n = s.Read(buffer, op.B, op.C);
                    return $"read {n}: {Hash(buffer, op.B, n)}";
                }
                case Kind.ReadSpan:
                {
                    var buffer = new byte[op.Size];
                    int n = s.Read(buffer.AsSpan());
                    return $"read {n}: {Hash(buffer, 0, n)}";
                }
                case Kind.Seek:
                    return $"at {s.Seek(op.A, (SeekOrigin)op.B)}";
                case Kind.SetLength:
                    s.SetLength(op.A);
                    return "ok";
                case Kind.SetPosition:
                    s.Position = op.A;
                    return "ok";
                case Kind.WriteByte:
                    s.WriteByte((byte)op.A);
                    return "ok";
                case Kind.ReadByte:
                    return $"byte {s.ReadByte()}";
                case Kind.Flush:
                    s.Flush();
                    return "ok";
                default:
                    s.Dispose();
                    return "ok";
            }
        }
        catch (Exception e)
        {
            return e.GetType().Name;
        }
    }

    private static byte[] Buffer(int size, int seed)
    {
        if (size < 0) return null!;
        var bytes = new byte[size];
        for (int i = 0; i < size; i++) bytes[i] = (byte)(i * 13 + seed + 1); // never all zeros: a missed zero-fill shows
        return bytes;
    }

    private static string Hash(byte[] buffer, int offset, int count)
    {
        var hash = new HashCode();
        hash.AddBytes(buffer.AsSpan(offset, count));
        return hash.ToHashCode().ToString();
    }
}
