using System.Buffers;
using System.IO.Pipelines;
using Manaloc.Buffers;

namespace Manaloc.Tests.Buffers;

/// <summary>
/// <see cref="BufferManagerOptions.PoisonReturnedBuffers"/>: what is given back, by any path over the manager, reads as
/// <see cref="BufferManagerOptions.PoisonByte"/> to whoever still holds it; off by default.
/// </summary>
public sealed class BufferPoisonTests
{
    private const byte Poison = BufferManagerOptions.PoisonByte;

    private static BufferManager Poisoning(bool debug = false) => new(new BufferManagerOptions { Name = "poison", PoisonReturnedBuffers = true, DebugMode = debug });

    private static bool IsPoisoned(ReadOnlySpan<byte> bytes) => bytes.Length > 0 && bytes.IndexOfAnyExcept(Poison) < 0;

    [Fact]
    public void A_returned_array_is_poisoned_and_still_pooled()
    {
        using var manager = Poisoning();
        for (int round = 0; round < 3; round++) // the first round fills the thread's caches; later ones go through them
        {
            var array = manager.Rent(1000);
            array.AsSpan().Fill(42);
            manager.Return(array);
            Assert.True(IsPoisoned(array));
            Assert.Same(array, manager.Rent(1000)); // the hot buffer is still used, through the slow path
            manager.Return(array, clearArray: true); // poison takes the place of the zeroing
            Assert.True(IsPoisoned(array));
        }
        Assert.Equal(0, manager.GetStatistics().RentedBytes);
    }

    [Fact]
    public void Arrays_the_pool_never_kept_are_poisoned_and_bad_returns_touch_nothing()
    {
        using var manager = new BufferManager(new BufferManagerOptions { Name = "poison-small", MaxBufferSize = 1024, PoisonReturnedBuffers = true });
        var large = manager.Rent(5000); // above the largest class: a plain allocation
        large.AsSpan().Fill(1);
        manager.Return(large);
        Assert.True(IsPoisoned(large));
        var foreign = new byte[100]; // in the pooled range but not a class size
        foreign.AsSpan().Fill(7);
        Assert.Throws<ArgumentException>(() => manager.Return(foreign));
        Assert.True(foreign.AsSpan().IndexOfAnyExcept((byte)7) < 0);
    }

    [Fact]
    public void A_foreign_or_double_return_in_debug_mode_throws_before_anything_is_poisoned()
    {
        using var manager = Poisoning(debug: true);
        var foreign = new byte[64];
        foreign.AsSpan().Fill(7);
        Assert.Throws<InvalidOperationException>(() => manager.Return(foreign)); // a class size, but never rented here
        Assert.True(foreign.AsSpan().IndexOfAnyExcept((byte)7) < 0);
        var array = manager.Rent(64);
        manager.Return(array);
        Assert.True(IsPoisoned(array));
        Assert.Throws<InvalidOperationException>(() => manager.Return(array));
    }

    [Fact]
    public void Poison_is_off_by_default_and_a_returned_array_keeps_its_bytes()
    {
        using var manager = new BufferManager(new BufferManagerOptions { Name = "plain" });
        Assert.False(new BufferManagerOptions().PoisonReturnedBuffers);
        var array = manager.Rent(1000);
        array.AsSpan().Fill(42);
        manager.Return(array);
        Assert.True(array.AsSpan().IndexOfAnyExcept((byte)42) < 0); // no fill paid when off
    }

    [Fact]
    public void A_rented_buffer_and_a_writers_segments_read_as_poison_after_dispose()
    {
        using var manager = Poisoning();
        var rented = manager.RentBuffer(100);
        var array = rented.Array;
        rented.Span.Fill(5);
        rented.Dispose();
        Assert.True(IsPoisoned(array));

        var writer = new PooledBufferWriter(manager);
        writer.Write(new byte[10_000].AsSpan()); // 4 KiB, then 8 KiB
        writer.GetSpan(1).Fill(3);
        var segments = new List<ReadOnlyMemory<byte>>();
        foreach (var segment in writer.WrittenSequence) segments.Add(segment);
        Assert.Equal(2, segments.Count);
        writer.Dispose();
        Assert.All(segments, s => Assert.True(IsPoisoned(s.Span)));
    }

    [Fact]
    public void A_writers_Reset_poisons_the_segment_it_keeps()
    {
        using var manager = Poisoning();
        using var writer = new PooledBufferWriter(manager);
        writer.Write("kept segment"u8);
        var before = writer.WrittenSequence.First;
        writer.Reset();
        Assert.True(IsPoisoned(before.Span));
        writer.Write("next"u8);
        Assert.Equal("next"u8.ToArray(), writer.ToArray());
    }

    [Fact]
    public void A_streams_arrays_are_poisoned_when_it_lets_them_go_and_its_reads_never_show_poison()
    {
        using var manager = Poisoning();
        using (var earlier = new PooledBufferStream(manager)) earlier.Write(new byte[200_000]); // its arrays go back poisoned
        var stream = new PooledBufferStream(manager);
        stream.Write(new byte[20_000]);
        var first = stream.GetReadOnlySequence().First;
        stream.SetLength(100_000); // grows with zeros: pooled arrays hold poison, the stream clears what it exposes
        stream.Position = 0;
        var read = new byte[100_000];
        stream.ReadExactly(read);
        Assert.True(read.AsSpan().IndexOfAnyExcept((byte)0) < 0);
        stream.Dispose();
        Assert.True(IsPoisoned(first.Span));
    }

    [Fact]
    public void A_memory_pool_owner_over_a_poisoning_manager_is_poisoned_on_dispose()
    {
        using var manager = Poisoning();
        using var pool = new BufferMemoryPool(new BufferMemoryPoolOptions { Manager = manager });
        var owner = pool.Rent(4096);
        owner.Memory.Span.Fill(8);
        Assert.True(System.Runtime.InteropServices.MemoryMarshal.TryGetArray<byte>(owner.Memory, out var segment));
        owner.Dispose(); // the owner keeps its array: the pool poisons it, since it never goes back to the manager
        Assert.True(IsPoisoned(segment));
    }

    [Fact]
    public void A_diagnostic_owners_array_goes_back_to_the_manager_poisoned()
    {
        using var manager = Poisoning();
        using var pool = new BufferMemoryPool(new BufferMemoryPoolOptions { Manager = manager, Diagnostics = true });
        var owner = pool.Rent(4096);
        owner.Memory.Span.Fill(8);
        owner.Dispose();
        var array = manager.Rent(4096); // the array the owner gave back, from this thread's hot slot
        Assert.True(IsPoisoned(array));
    }

    [Fact]
    public void A_diagnostic_memory_pool_poisons_through_the_manager_it_creates()
    {
        using var pool = new BufferMemoryPool(new BufferMemoryPoolOptions { Name = "diagnostic", Diagnostics = true });
        Assert.True(pool.Manager.PoisonsReturnedBuffers);
        using var plain = new BufferMemoryPool(new BufferMemoryPoolOptions { Name = "plain" });
        Assert.False(plain.Manager.PoisonsReturnedBuffers);
    }

    [Fact]
    public async Task CopyToAsync_to_a_pipe_moves_every_segment_under_back_pressure()
    {
        using var manager = new BufferManager(new BufferManagerOptions { Name = "copy", DebugMode = true });
        using var writer = new PooledBufferWriter(manager);
        var payload = new byte[3 << 20];
        new Random(5).NextBytes(payload);
        for (int i = 0; i < payload.Length; i += 10_000) writer.Write(payload.AsSpan(i, Math.Min(10_000, payload.Length - i)));
        var pipe = new Pipe(new PipeOptions(pauseWriterThreshold: 64 << 10, resumeWriterThreshold: 32 << 10));
        var reading = Task.Run(async () =>
        {
            using var received = new MemoryStream();
            while (true)
            {
                var read = await pipe.Reader.ReadAsync();
                foreach (var segment in read.Buffer) received.Write(segment.Span);
                pipe.Reader.AdvanceTo(read.Buffer.End);
                if (read.IsCompleted) return received.ToArray();
            }
        });
        var flush = await writer.CopyToAsync(pipe.Writer);
        Assert.False(flush.IsCompleted);
        await pipe.Writer.CompleteAsync();
        Assert.Equal(payload, await reading);
        Assert.Equal(payload.Length, writer.WrittenCount); // the writer still holds its content
    }

    [Fact]
    public async Task CopyToAsync_stops_when_the_reader_has_gone()
    {
        using var writer = new PooledBufferWriter();
        writer.Write(new byte[100_000]); // several segments
        var pipe = new Pipe(new PipeOptions(pauseWriterThreshold: 0)); // never blocks
        await pipe.Reader.CompleteAsync();
        var flush = await writer.CopyToAsync(pipe.Writer);
        Assert.True(flush.IsCompleted);
        await Assert.ThrowsAsync<ArgumentNullException>(async () => await writer.CopyToAsync((PipeWriter)null!));
        writer.Dispose();
        await Assert.ThrowsAsync<ObjectDisposedException>(async () => await writer.CopyToAsync(new Pipe().Writer));
    }
}
