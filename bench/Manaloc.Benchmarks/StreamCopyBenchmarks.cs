using System.Buffers;
using System.IO.Pipelines;
using BenchmarkDotNet.Attributes;
using Manaloc.Buffers;
using Manaloc.Lab.Subjects;
using Microsoft.IO;

namespace Manaloc.Benchmarks;

/// <summary>
/// The lab's <c>streams</c> operation on one thread, for profiling: a new stream, the payload written in 4 KiB writes,
/// read back from the start in 4 KiB reads, disposed. Anchor: Microsoft.IO's <c>RecyclableMemoryStream</c> (default
/// options: 128 KiB blocks), the pooled stream the lab's 1.2x target is set against.
/// </summary>
[MemoryDiagnoser]
public class StreamCopyBenchmarks
{
    private const int Chunk = 4096;
    private readonly RecyclableMemoryStreamManager _recyclable = new();
    private readonly byte[] _chunk = new byte[Chunk];
    private readonly byte[] _readBuffer = new byte[Chunk];
    private byte[] _floor = [];

    /// <summary>Payload bytes.</summary>
    [Params(64 << 10, 1 << 20, 16 << 20)]
    public int Size { get; set; }

    /// <summary>Fills the chunk with text-like bytes, as the lab does.</summary>
    [GlobalSetup]
    public void Setup()
    {
        for (int i = 0; i < _chunk.Length; i++) _chunk[i] = (byte)(' ' + i * 7 % 90);
        _floor = new byte[Size];
    }

    /// <summary>The floor of any in-memory stream: a MemoryStream over one reused array of exactly the payload's size (no growth, no pool), the same calls.</summary>
    [Benchmark]
    public long Floor()
    {
        using var stream = new MemoryStream(_floor, 0, Size, writable: true, publiclyVisible: true);
        return Use(stream);
    }

    /// <summary>Anchor: RecyclableMemoryStream with default options.</summary>
    [Benchmark(Baseline = true)]
    public long Recyclable()
    {
        using var stream = _recyclable.GetStream();
        return Use(stream);
    }

    /// <summary>Manaloc's stream over the shared manager.</summary>
    [Benchmark]
    public long Pooled()
    {
        using var stream = new PooledBufferStream();
        return Use(stream);
    }

    private long Use(Stream stream) => StreamRoundTrip.WriteThenRead(stream, Size, _chunk, _readBuffer);
}

/// <summary>
/// The lab's <c>pipelines</c> operation, for profiling: a <see cref="Pipe"/> moves 16 MiB (one invocation) from this
/// thread to a reader task in segments of <see cref="Segment"/> bytes, each filled and flushed. Anchor:
/// <see cref="MemoryPool{T}.Shared"/>. Two threads on a shared two-core machine: compare ratios within one run.
/// </summary>
[MemoryDiagnoser]
public class PipeMoveBenchmarks
{
    private const long Bytes = 16L << 20;
    private BufferMemoryPool _pool = null!;
    private PipeMove _shared = null!;
    private PipeMove _ours = null!;

    /// <summary>Bytes per segment.</summary>
    [Params(4096, 65536)]
    public int Segment { get; set; }

    /// <summary>One pipe and reader per variant, for the whole run.</summary>
    [GlobalSetup]
    public void Setup()
    {
        _pool = new BufferMemoryPool(new BufferMemoryPoolOptions { Name = "bench.pipe" });
        _shared = new PipeMove(MemoryPool<byte>.Shared, Segment);
        _ours = new PipeMove(_pool, Segment);
    }

    /// <summary>Anchor: <see cref="MemoryPool{T}.Shared"/>, which a Pipe recognises and rents from <see cref="ArrayPool{T}.Shared"/> directly, with no owner object.</summary>
    [Benchmark(Baseline = true)]
    public long Shared()
    {
        _shared.Move(Bytes / Segment);
        return _shared.BytesMoved;
    }

    /// <summary>Manaloc's pool.</summary>
    [Benchmark]
    public long Pool()
    {
        _ours.Move(Bytes / Segment);
        return _ours.BytesMoved;
    }

    /// <summary>Completes the pipes and gives the pool's arrays back.</summary>
    [GlobalCleanup]
    public void Cleanup()
    {
        _shared.Dispose();
        _ours.Dispose();
        _pool.Dispose();
    }
}
