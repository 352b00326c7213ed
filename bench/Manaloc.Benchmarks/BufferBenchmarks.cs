using System.Buffers;
using BenchmarkDotNet.Attributes;
using Manaloc.Buffers;

namespace Manaloc.Benchmarks;

/// <summary>Rent, touch, return a byte buffer. Anchor: ArrayPool&lt;byte&gt;.Shared. The 2-thread target is measured by the lab's <c>buffers</c> experiment.</summary>
[MemoryDiagnoser]
public class BufferBenchmarks
{
    private readonly BufferManager _manager = new(new BufferManagerOptions { Name = "bench.buffers" });

    /// <summary>Bytes asked for.</summary>
    [Params(256, 4096, 65536, 1 << 20)]
    public int Size { get; set; }

    /// <summary>Anchor.</summary>
    [Benchmark(Baseline = true)]
    public byte ArrayPoolShared()
    {
        var b = ArrayPool<byte>.Shared.Rent(Size);
        b[0] = 1;
        byte result = b[0]; // read before the Return: the pool may hand it out again
        ArrayPool<byte>.Shared.Return(b);
        return result;
    }

    /// <summary>Manaloc's buffer manager.</summary>
    [Benchmark]
    public byte BufferManager()
    {
        var b = _manager.Rent(Size);
        b[0] = 1;
        byte result = b[0]; // read before the Return: the pool may hand it out again
        _manager.Return(b);
        return result;
    }

    /// <summary>The rented-buffer struct that returns itself.</summary>
    [Benchmark]
    public byte RentedBuffer()
    {
        using var b = _manager.RentBuffer(Size);
        b.Span[0] = 1;
        return b.Span[0];
    }

    /// <summary>Allocation instead of reuse.</summary>
    [Benchmark]
    public byte NewArray()
    {
        var b = new byte[Size];
        b[0] = 1;
        return b[0];
    }
}
