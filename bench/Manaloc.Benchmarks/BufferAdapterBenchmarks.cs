using System.Buffers;
using BenchmarkDotNet.Attributes;
using Manaloc.Buffers;

namespace Manaloc.Benchmarks;

/// <summary>
/// The per-operation costs under the buffer adapters, on one thread: a MemoryPool rent and Dispose (one at a time, and
/// 16 held at once, as a pipe holds segments), a small stream's whole life, and a small response's writer (1 KiB written,
/// then Dispose), with the manager's <see cref="BufferManagerOptions.PoisonReturnedBuffers"/> off (the default) and on.
/// Anchors: <see cref="MemoryPool{T}.Shared"/>, <see cref="MemoryStream"/> and <see cref="ArrayBufferWriter{T}"/>. The cross-thread figures (a Pipe, larger streams) are the lab's <c>pipelines</c> and
/// <c>streams</c> experiments.
/// </summary>
[MemoryDiagnoser]
public class BufferAdapterBenchmarks
{
    private const int Held = 16;
    private readonly BufferMemoryPool _pool = new(new BufferMemoryPoolOptions { Name = "bench.memory-pool" });
    private readonly IMemoryOwner<byte>[] _owners = new IMemoryOwner<byte>[Held];
    private readonly byte[] _chunk = new byte[1024];
    private readonly byte[] _readBuffer = new byte[4096];
    private readonly BufferManager _manager = new(new BufferManagerOptions { Name = "bench.writer" });
    private readonly BufferManager _poisoning = new(new BufferManagerOptions { Name = "bench.writer.poison", PoisonReturnedBuffers = true });

    /// <summary>Anchor: an owner allocated per rent, the array from ArrayPool.Shared.</summary>
    [Benchmark(Baseline = true)]
    public int SharedRentDispose()
    {
        using var owner = MemoryPool<byte>.Shared.Rent(4096);
        return owner.Memory.Length;
    }

    /// <summary>A pooled owner that keeps its array.</summary>
    [Benchmark]
    public int PoolRentDispose()
    {
        using var owner = _pool.Rent(4096);
        return owner.Memory.Length;
    }

    /// <summary>Anchor: 16 rents held, then 16 Disposes (per pair: divide by 16).</summary>
    [Benchmark(OperationsPerInvoke = Held)]
    public int SharedRentSixteen() => RentSixteen(MemoryPool<byte>.Shared);

    /// <summary>16 rents held, then 16 Disposes: past the per-thread hot path, through the thread stack.</summary>
    [Benchmark(OperationsPerInvoke = Held)]
    public int PoolRentSixteen() => RentSixteen(_pool);

    private int RentSixteen(MemoryPool<byte> pool)
    {
        int total = 0;
        for (int i = 0; i < Held; i++) total += (_owners[i] = pool.Rent(4096)).Memory.Length;
        for (int i = 0; i < Held; i++) _owners[i].Dispose();
        return total;
    }

    /// <summary>Anchor: 1 KiB written, read back, disposed.</summary>
    [Benchmark]
    public int MemoryStreamOneKiB() => UseStream(new MemoryStream());

    /// <summary>The same through a pooled stream.</summary>
    [Benchmark]
    public int PooledStreamOneKiB() => UseStream(new PooledBufferStream());

    private int UseStream(Stream stream)
    {
        using (stream)
        {
            stream.Write(_chunk, 0, _chunk.Length);
            stream.Position = 0;
            int total = 0, read;
            while ((read = stream.Read(_readBuffer, 0, _readBuffer.Length)) > 0) total += read;
            return total;
        }
    }

    /// <summary>Anchor: 1 KiB into a new ArrayBufferWriter (its array is garbage afterwards).</summary>
    [Benchmark]
    public int ArrayBufferWriterOneKiB()
    {
        var writer = new ArrayBufferWriter<byte>();
        writer.Write(_chunk);
        return writer.WrittenCount;
    }

    /// <summary>1 KiB into a PooledBufferWriter, then Dispose (its segment back to the manager), poisoning off.</summary>
    [Benchmark]
    public long PooledWriterOneKiB() => WriteAndDispose(_manager);

    /// <summary>The same with <see cref="BufferManagerOptions.PoisonReturnedBuffers"/> on: each segment filled on return.</summary>
    [Benchmark]
    public long PooledWriterOneKiBPoisoned() => WriteAndDispose(_poisoning);

    private long WriteAndDispose(BufferManager manager)
    {
        using var writer = new PooledBufferWriter(manager);
        writer.Write(_chunk);
        return writer.WrittenCount;
    }

    /// <summary>Gives the pool's arrays back.</summary>
    [GlobalCleanup]
    public void Cleanup()
    {
        _pool.Dispose();
        _manager.Dispose();
        _poisoning.Dispose();
    }
}
