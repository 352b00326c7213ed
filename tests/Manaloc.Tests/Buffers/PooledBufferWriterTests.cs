using System.Buffers;
using System.IO.Pipelines;
using System.Text.Json;
using CsCheck;
using Manaloc.Buffers;

namespace Manaloc.Tests.Buffers;

/// <summary><see cref="PooledBufferWriter"/>: ArrayBufferWriter's contract, the sequence, copies, Reset, Dispose, and serializers over it.</summary>
public sealed class PooledBufferWriterTests
{
    private static BufferManager Strict(string name) => new(new BufferManagerOptions { Name = name, DebugMode = true });

    private static byte[] Pattern(int length, int seed = 0)
    {
        var bytes = new byte[length];
        for (int i = 0; i < bytes.Length; i++) bytes[i] = (byte)(i * 31 + seed);
        return bytes;
    }

    [Fact]
    public void Bad_input_throws_what_ArrayBufferWriter_throws()
    {
        using var writer = new PooledBufferWriter();
        var reference = new ArrayBufferWriter<byte>();
        Assert.Equal("count", Assert.Throws<ArgumentException>(() => writer.Advance(-1)).ParamName);
        Assert.Throws<ArgumentException>(() => reference.Advance(-1));
        Assert.Equal("sizeHint", Assert.Throws<ArgumentException>(() => writer.GetSpan(-1)).ParamName);
        Assert.Equal("sizeHint", Assert.Throws<ArgumentException>(() => writer.GetMemory(int.MinValue)).ParamName);
        Assert.Throws<InvalidOperationException>(() => writer.Advance(1)); // nothing was asked for yet
        Assert.Throws<InvalidOperationException>(() => reference.Advance(1));
        writer.Advance(0);
        int given = writer.GetSpan(10).Length;
        Assert.True(given >= 10);
        Assert.Throws<InvalidOperationException>(() => writer.Advance(given + 1)); // past the span given
        writer.Advance(given);
        Assert.Equal(given, writer.WrittenCount);
        Assert.Throws<InvalidOperationException>(() => writer.Advance(1)); // the span is used up
    }

    [Fact]
    public void GetSpan_returns_at_least_the_hint_and_at_least_one_byte_for_zero()
    {
        using var writer = new PooledBufferWriter();
        Assert.True(writer.GetSpan().Length >= 1);
        Assert.True(writer.GetMemory(0).Length >= 1);
        Assert.True(writer.GetSpan(100_000).Length >= 100_000);
        Assert.True(writer.GetMemory(3 << 20).Length >= 3 << 20); // above the largest growth segment
        Assert.Equal(0, writer.WrittenCount);
    }

    [Fact]
    public void Writes_across_segments_come_back_in_order_and_growth_never_copies()
    {
        using var writer = new PooledBufferWriter();
        var payload = Pattern(5 << 20);
        var first = writer.GetMemory(100);
        payload.AsSpan(0, 100).CopyTo(first.Span);
        writer.Advance(100);
        int at = 100;
        while (at < payload.Length)
        {
            var span = writer.GetSpan(Math.Min(7000, payload.Length - at));
            int n = Math.Min(span.Length, Math.Min(7000, payload.Length - at));
            payload.AsSpan(at, n).CopyTo(span);
            writer.Advance(n);
            at += n;
        }
        Assert.Equal(payload.Length, writer.WrittenCount);
        var sequence = writer.WrittenSequence;
        Assert.False(sequence.IsSingleSegment);
        Assert.Equal(payload, sequence.ToArray());
        Assert.Equal(payload, writer.ToArray());
        Assert.True(first.Span[..100].SequenceEqual(payload.AsSpan(0, 100)), "the first segment was never moved");
    }

    [Fact]
    public void A_segment_left_for_a_larger_hint_keeps_only_what_was_written()
    {
        using var writer = new PooledBufferWriter();
        writer.GetSpan(10)[..3].Fill(1);
        writer.Advance(3);
        var big = writer.GetSpan(50_000); // more than the first segment has free: a new one
        big[..5].Fill(2);
        writer.Advance(5);
        writer.GetSpan(2_000_000); // the second segment is skipped too (and, empty... it held 5)
        Assert.Equal(new byte[] { 1, 1, 1, 2, 2, 2, 2, 2 }, writer.ToArray());
    }

    [Fact]
    public void An_empty_last_segment_is_traded_for_a_larger_one()
    {
        using var manager = Strict("trade");
        using var writer = new PooledBufferWriter(manager);
        writer.GetSpan(10)[0] = 1;
        writer.Advance(1);
        writer.GetSpan(10_000);        // second segment, nothing written into it
        var span = writer.GetSpan(1_000_000); // traded: the 16 KiB array goes back, a 1 MiB one comes
        span[0] = 2;
        writer.Advance(1);
        Assert.Equal(new byte[] { 1, 2 }, writer.ToArray());
        Assert.Equal(2, writer.WrittenSequence.Length);
        Assert.Equal(2, CountSegments(writer.WrittenSequence));
    }

    private static int CountSegments(ReadOnlySequence<byte> sequence)
    {
        int n = 0;
        foreach (var _ in sequence) n++;
        return n;
    }

    [Fact]
    public async Task CopyTo_copies_to_spans_writers_and_streams()
    {
        using var writer = new PooledBufferWriter();
        var payload = Pattern(300_000, 5);
        writer.Write(payload);
        var span = new byte[payload.Length + 10];
        writer.CopyTo(span);
        Assert.Equal(payload, span[..payload.Length]);
        var e = Assert.Throws<ArgumentException>(() => writer.CopyTo(new byte[payload.Length - 1]));
        Assert.Equal("destination", e.ParamName);
        var other = new ArrayBufferWriter<byte>();
        writer.CopyTo(other);
        Assert.Equal(payload, other.WrittenSpan.ToArray());
        var stream = new MemoryStream();
        writer.CopyTo(stream);
        Assert.Equal(payload, stream.ToArray());
        var asyncStream = new MemoryStream();
        await writer.CopyToAsync(asyncStream);
        Assert.Equal(payload, asyncStream.ToArray());
        Assert.Throws<ArgumentNullException>(() => writer.CopyTo((Stream)null!));
        Assert.Throws<ArgumentNullException>(() => writer.CopyTo((IBufferWriter<byte>)null!));
    }

    [Fact]
    public void An_empty_writer_has_an_empty_sequence_and_array()
    {
        using var writer = new PooledBufferWriter();
        Assert.True(writer.WrittenSequence.IsEmpty);
        Assert.Empty(writer.ToArray());
        writer.CopyTo(Span<byte>.Empty);
    }

    [Fact]
    public void Reset_forgets_the_bytes_keeps_the_first_segment_and_returns_the_rest()
    {
        using var manager = Strict("reset");
        var writer = new PooledBufferWriter(manager);
        writer.Write(Pattern(200_000));
        var firstBefore = writer.WrittenSequence.First;
        writer.Reset();
        Assert.Equal(0, writer.WrittenCount);
        Assert.True(writer.WrittenSequence.IsEmpty);
        var again = writer.GetMemory(1);
        Assert.True(System.Runtime.InteropServices.MemoryMarshal.TryGetArray<byte>(again, out var a));
        Assert.True(System.Runtime.InteropServices.MemoryMarshal.TryGetArray(firstBefore, out var b));
        Assert.Same(b.Array, a.Array); // the first array is reused
        writer.Write("xyz"u8);
        Assert.Equal("xyz"u8.ToArray(), writer.ToArray());
        writer.Dispose(); // every array back once: the strict manager throws on a second return
        writer.Dispose();
    }

    [Fact]
    public void Dispose_returns_every_segment_once_and_later_use_throws()
    {
        using var manager = Strict("dispose");
        var writer = new PooledBufferWriter(manager);
        writer.Write(Pattern(3 << 20));
        writer.Dispose();
        writer.Dispose();
        var error = Assert.Throws<ObjectDisposedException>(() => writer.GetSpan());
        Assert.Contains("PooledBufferWriter (over BufferManager 'dispose') was disposed", error.Message, StringComparison.Ordinal);
        Assert.Equal("PooledBufferWriter (disposed)", writer.ToString());
        Assert.Throws<ObjectDisposedException>(() => writer.GetMemory(10));
        Assert.Throws<ObjectDisposedException>(() => writer.Advance(0));
        Assert.Throws<ObjectDisposedException>(() => writer.WrittenCount);
        Assert.Throws<ObjectDisposedException>(() => writer.WrittenSequence);
        Assert.Throws<ObjectDisposedException>(() => writer.ToArray());
        Assert.Throws<ObjectDisposedException>(() => writer.Reset());
        Assert.Throws<ObjectDisposedException>(() => writer.CopyTo(new MemoryStream()));
        // Every array went back: renting the sizes again hands out pooled arrays without a foreign-return complaint.
        Assert.True(manager.GetStatistics().Retained > 0);
    }

    [Fact]
    public void Utf8JsonWriter_and_JsonSerializer_write_through_it()
    {
        var value = Enumerable.Range(0, 20_000).Select(i => new Item(i, $"name {i}", i * 0.5)).ToList();
        using var writer = new PooledBufferWriter();
        using (var json = new Utf8JsonWriter(writer)) JsonSerializer.Serialize(json, value);
        Assert.True(writer.WrittenCount > 500_000);
        var reader = new Utf8JsonReader(writer.WrittenSequence);
        var back = JsonSerializer.Deserialize<List<Item>>(ref reader);
        Assert.Equal(value, back);
    }

    public sealed record Item(int Id, string Name, double Score);

    [Fact]
    public void Writing_allocates_nothing_besides_the_writer_after_warm_up()
    {
        using var manager = new BufferManager(new BufferManagerOptions { Name = "writer-zero-alloc" }); // private: other tests' threads cannot drain it
        var chunk = Pattern(1000);
        void Write(PooledBufferWriter writer)
        {
            for (int i = 0; i < 2000; i++) writer.Write(chunk); // 2 MB: many segments
        }
        using (var warm = new PooledBufferWriter(manager)) Write(warm);
        long writerOnly = Allocations.OnThisThread(() => new PooledBufferWriter(manager).Dispose());
        long withWrites = Allocations.OnThisThread(() =>
        {
            using var writer = new PooledBufferWriter(manager);
            Write(writer);
            _ = writer.WrittenSequence;
        });
        Assert.True(writerOnly > 0);
        Assert.Equal(writerOnly, withWrites);
    }

    [Fact]
    public void A_pipe_writer_copy_and_random_hints_match_ArrayBufferWriter()
        => Gen.Select(Gen.Int[-1, 70_000], Gen.Int[0, 100]).Array[1, 40].Sample(steps =>
        {
            using var manager = Strict("model");
            using var writer = new PooledBufferWriter(manager);
            var reference = new ArrayBufferWriter<byte>();
            byte next = 0;
            foreach (var (hint, percent) in steps)
            {
                if (hint < 0)
                {
                    Assert.Throws<ArgumentException>(() => writer.GetSpan(hint));
                    continue;
                }
                var span = writer.GetSpan(hint);
                var referenceSpan = reference.GetSpan(hint);
                Assert.True(span.Length >= Math.Max(1, hint));
                int n = Math.Min(span.Length, Math.Min(referenceSpan.Length, Math.Max(hint, 1) * percent / 100));
                for (int i = 0; i < n; i++) span[i] = referenceSpan[i] = next++;
                writer.Advance(n);
                reference.Advance(n);
            }
            Assert.Equal(reference.WrittenCount, writer.WrittenCount);
            Assert.True(reference.WrittenSpan.SequenceEqual(writer.WrittenSequence.ToArray()));
            var pipe = new Pipe();
            writer.CopyTo(pipe.Writer);
            pipe.Writer.Complete();
            Assert.True(pipe.Reader.TryRead(out var result));
            Assert.True(reference.WrittenSpan.SequenceEqual(result.Buffer.ToArray()));
        }, iter: 200);

    [Fact]
    public void ToString_shows_what_was_written_and_the_manager()
    {
        using var manager = new BufferManager(new BufferManagerOptions { Name = "wire" });
        using var writer = new PooledBufferWriter(manager);
        Assert.Equal("PooledBufferWriter (0 bytes written, BufferManager 'wire')", writer.ToString());
        writer.Write("x"u8);
        Assert.Equal("PooledBufferWriter (1 byte written, BufferManager 'wire')", writer.ToString());
    }
}
