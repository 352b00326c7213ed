using System.Buffers;
using System.IO.Compression;
using System.Text.Json;
using Manaloc.Buffers;

namespace Manaloc.Tests.Buffers;

/// <summary><see cref="PooledBufferStream"/>: what the model test does not reach (sequences, buffers, copies, async, serializers, returns).</summary>
public sealed class PooledBufferStreamTests
{
    private static BufferManager Strict(string name) => new(new BufferManagerOptions { Name = name, DebugMode = true });

    private static byte[] Pattern(int length)
    {
        var bytes = new byte[length];
        for (int i = 0; i < bytes.Length; i++) bytes[i] = (byte)(i * 7 + i / 251);
        return bytes;
    }

    [Fact]
    public void Large_writes_read_back_across_segments()
    {
        using var stream = new PooledBufferStream();
        var payload = Pattern(3 << 20);
        stream.Write(payload, 0, 1000);
        stream.Write(payload.AsSpan(1000));
        Assert.Equal(payload.Length, stream.Length);
        stream.Position = 0;
        var back = new byte[payload.Length];
        int read = 0;
        while (read < back.Length) read += stream.Read(back, read, Math.Min(70_001, back.Length - read));
        Assert.Equal(payload, back);
        Assert.Equal(0, stream.Read(back, 0, 10));
        Assert.Equal(-1, stream.ReadByte());
        Assert.Equal(payload, stream.ToArray());
    }

    [Fact]
    public void GetReadOnlySequence_shows_the_whole_content_without_copying()
    {
        using var stream = new PooledBufferStream();
        Assert.True(stream.GetReadOnlySequence().IsEmpty);
        var payload = Pattern(100_000);
        for (int at = 0; at < payload.Length; at += 1000) stream.Write(payload, at, 1000); // grows segment by segment
        var sequence = stream.GetReadOnlySequence();
        Assert.False(sequence.IsSingleSegment);
        Assert.Equal(payload, sequence.ToArray());
        stream.SetLength(4096); // exactly the first segment
        Assert.Equal(payload[..4096], stream.GetReadOnlySequence().ToArray());
        stream.SetLength(5000);
        var grown = stream.GetReadOnlySequence().ToArray();
        Assert.Equal(payload[..4096], grown[..4096]);
        Assert.All(grown[4096..], b => Assert.Equal(0, b));
    }

    [Fact]
    public void TryGetBuffer_succeeds_only_while_the_data_is_in_one_segment()
    {
        using var stream = new PooledBufferStream();
        Assert.True(stream.TryGetBuffer(out var empty));
        Assert.Equal(0, empty.Count);
        stream.Write(Pattern(1000));
        Assert.True(stream.TryGetBuffer(out var one));
        Assert.Equal(Pattern(1000), one.ToArray());
        stream.Write(Pattern(10_000));
        Assert.False(stream.TryGetBuffer(out _));
        stream.SetLength(100);
        Assert.True(stream.TryGetBuffer(out var shrunk));
        Assert.Equal(100, shrunk.Count);
        stream.Dispose();
        Assert.False(stream.TryGetBuffer(out _));
    }

    [Fact]
    public void Dispose_returns_every_segment_once_and_later_use_throws()
    {
        using var manager = Strict("stream-dispose");
        var stream = new PooledBufferStream(manager);
        stream.Write(Pattern(2 << 20));
        stream.SetLength(10);
        stream.SetLength(3 << 20);
        stream.Dispose();
        stream.Dispose(); // the strict manager throws on a second return of any array
        Assert.False(stream.CanRead || stream.CanWrite || stream.CanSeek);
        Assert.Throws<ObjectDisposedException>(() => stream.Length);
        Assert.Throws<ObjectDisposedException>(() => stream.ToArray());
        Assert.Throws<ObjectDisposedException>(() => stream.GetReadOnlySequence());
        Assert.Throws<ObjectDisposedException>(() => stream.WriteTo(new MemoryStream()));
        Assert.Throws<ObjectDisposedException>(() => stream.CopyTo(new MemoryStream()));
        Assert.True(stream.ReadAsync(new byte[1]).AsTask().Exception?.InnerException is ObjectDisposedException);
        Assert.Throws<NotSupportedException>(() => stream.SetLength(1)); // as MemoryStream
        stream.Flush();
        Assert.Equal("PooledBufferStream (disposed)", stream.ToString());
        Assert.Contains("PooledBufferStream (over BufferManager 'stream-dispose') was disposed", Assert.Throws<ObjectDisposedException>(() => stream.Position).Message, StringComparison.Ordinal);
    }

    [Fact]
    public void ToString_shows_length_position_and_the_manager()
    {
        using var manager = new BufferManager(new BufferManagerOptions { Name = "wire" });
        using var stream = new PooledBufferStream(manager);
        stream.Write("abc"u8);
        stream.Position = 1;
        Assert.Equal("PooledBufferStream (length 3, position 1, BufferManager 'wire')", stream.ToString());
    }

    [Fact]
    public async Task CopyTo_and_WriteTo_copy_from_the_position_and_the_start()
    {
        using var stream = new PooledBufferStream();
        var payload = Pattern(200_000);
        stream.Write(payload);
        stream.Position = 1000;
        var copy = new MemoryStream();
        stream.CopyTo(copy);
        Assert.Equal(payload[1000..], copy.ToArray());
        Assert.Equal(payload.Length, stream.Position);
        var whole = new MemoryStream();
        stream.WriteTo(whole);
        Assert.Equal(payload, whole.ToArray());
        stream.Position = 5;
        var asyncCopy = new MemoryStream();
        await stream.CopyToAsync(asyncCopy);
        Assert.Equal(payload[5..], asyncCopy.ToArray());
        Assert.Throws<ArgumentNullException>(() => stream.CopyTo(null!));
        Assert.Throws<ArgumentOutOfRangeException>(() => stream.CopyTo(new MemoryStream(), 0));
        var closed = new MemoryStream();
        closed.Dispose();
        Assert.Throws<ObjectDisposedException>(() => stream.CopyTo(closed));
    }

    [Fact]
    public async Task Async_overloads_complete_and_honour_cancellation()
    {
        await using var stream = new PooledBufferStream();
        await stream.WriteAsync(Pattern(10_000));
        await stream.WriteAsync(Pattern(100), 0, 100);
        await stream.FlushAsync();
        stream.Position = 0;
        var back = new byte[10_100];
        Assert.Equal(10_000, await stream.ReadAsync(back.AsMemory(0, 10_000)));
        Assert.Equal(100, await stream.ReadAsync(back, 10_000, 100));
        using var cancelled = new CancellationTokenSource();
        cancelled.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => stream.ReadAsync(back, 0, 1, cancelled.Token));
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await stream.WriteAsync(back.AsMemory(), cancelled.Token));
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => stream.FlushAsync(cancelled.Token));
        await Assert.ThrowsAsync<ArgumentNullException>(() => stream.WriteAsync(null!, 0, 1));
    }

    [Fact]
    public void GZipStream_compresses_into_and_decompresses_out_of_it()
    {
        var payload = Pattern(1 << 20);
        using var compressed = new PooledBufferStream();
        using (var gzip = new GZipStream(compressed, CompressionLevel.Fastest, leaveOpen: true)) gzip.Write(payload);
        Assert.True(compressed.Length < payload.Length);
        compressed.Position = 0;
        using var plain = new PooledBufferStream();
        using (var gunzip = new GZipStream(compressed, CompressionMode.Decompress, leaveOpen: true)) gunzip.CopyTo(plain);
        Assert.Equal(payload, plain.ToArray());
    }

    [Fact]
    public async Task JsonSerializer_serializes_into_and_out_of_it()
    {
        var value = Enumerable.Range(0, 10_000).ToDictionary(i => $"key{i}", i => new[] { i, i * 2 });
        await using var stream = new PooledBufferStream();
        JsonSerializer.Serialize(stream, value);
        await JsonSerializer.SerializeAsync(stream, value);
        stream.Position = 0;
        var reader = new StreamReader(stream);
        string both = await reader.ReadToEndAsync();
        int half = both.Length / 2;
        Assert.Equal(both[..half], both[half..]);
        Assert.Equal(value, JsonSerializer.Deserialize<Dictionary<string, int[]>>(both[..half]));
        stream.Position = 0;
        stream.SetLength(0);
        await JsonSerializer.SerializeAsync(stream, value);
        stream.Position = 0;
        Assert.Equal(value, await JsonSerializer.DeserializeAsync<Dictionary<string, int[]>>(stream));
    }

    [Fact]
    public void Seeking_back_and_forth_over_many_segments_reads_the_right_bytes()
    {
        using var stream = new PooledBufferStream();
        var payload = Pattern(4 << 20);
        stream.Write(payload);
        var random = new Random(7);
        for (int i = 0; i < 500; i++)
        {
            int at = random.Next(payload.Length);
            stream.Seek(at - stream.Position, SeekOrigin.Current);
            Assert.Equal(payload[at], stream.ReadByte());
        }
    }
}
