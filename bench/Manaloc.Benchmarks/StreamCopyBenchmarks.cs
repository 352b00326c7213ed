using System.Buffers;
using System.IO.Pipelines;
using BenchmarkDotNet.Attributes;
using Manaloc.Buffers;
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

    private long Use(Stream stream)
    {
        for (int at = 0; at < Size; at += Chunk) stream.Write(_chunk, 0, Math.Min(Chunk, Size - at));
        stream.Position = 0;
        long sink = 0;
        int read;
        while ((read = stream.Read(_readBuffer, 0, Chunk)) > 0) sink += _readBuffer[read - 1];
        return sink;
    }
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
    private PipeMover _shared = null!;
    private PipeMover _ours = null!;

    /// <summary>Bytes per segment.</summary>
    [Params(4096, 65536)]
    public int Segment { get; set; }

    /// <summary>One pipe and reader per variant, for the whole run.</summary>
    [GlobalSetup]
    public void Setup()
    {
        _pool = new BufferMemoryPool(new BufferMemoryPoolOptions { Name = "bench.pipe" });
        _shared = new PipeMover(MemoryPool<byte>.Shared, Segment);
        _ours = new PipeMover(_pool, Segment);
    }

    /// <summary>Anchor: owners allocated per segment, arrays from ArrayPool.Shared.</summary>
    [Benchmark(Baseline = true)]
    public long Shared() => _shared.Move(Bytes / Segment);

    /// <summary>Manaloc's pool.</summary>
    [Benchmark]
    public long Pool() => _ours.Move(Bytes / Segment);

    /// <summary>Completes the pipes and gives the pool's arrays back.</summary>
    [GlobalCleanup]
    public void Cleanup()
    {
        _shared.Dispose();
        _ours.Dispose();
        _pool.Dispose();
    }

    /// <summary>The lab's pipe run: the writer waits once 1 MiB is in flight until half of it was read.</summary>
    private sealed class PipeMover : IDisposable
    {
        private const long Window = 1 << 20;
        private readonly Pipe _pipe;
        private readonly int _size;
        private readonly Task _reader;
        private long _written;
        private long _consumed;

        public PipeMover(MemoryPool<byte> pool, int size)
        {
            _size = size;
            _pipe = new Pipe(new PipeOptions(pool: pool, minimumSegmentSize: size, pauseWriterThreshold: 0, useSynchronizationContext: false));
            _reader = Task.Run(ReadAll);
        }

        public long Move(long segments)
        {
            var writer = _pipe.Writer;
            for (long i = 0; i < segments; i++)
            {
                var memory = writer.GetMemory(_size);
                memory.Span[.._size].Fill((byte)i);
                writer.Advance(_size);
                var flush = writer.FlushAsync();
                if (!flush.IsCompletedSuccessfully) flush.AsTask().GetAwaiter().GetResult();
                _written += _size;
                if (_written - Volatile.Read(ref _consumed) > Window) WaitForReader(_written - Window / 2);
            }
            WaitForReader(_written);
            return _written;
        }

        private void WaitForReader(long target)
        {
            var spin = new SpinWait();
            while (Volatile.Read(ref _consumed) < target) spin.SpinOnce(sleep1Threshold: -1);
        }

        private async Task ReadAll()
        {
            var reader = _pipe.Reader;
            long sum = 0;
            while (true)
            {
                var result = await reader.ReadAsync().ConfigureAwait(false);
                foreach (var memory in result.Buffer) { if (!memory.IsEmpty) sum += memory.Span[0] + memory.Span[^1]; }
                Volatile.Write(ref _consumed, _consumed + result.Buffer.Length);
                reader.AdvanceTo(result.Buffer.End);
                if (result.IsCompleted) break;
            }
            await reader.CompleteAsync().ConfigureAwait(false);
            GC.KeepAlive(sum);
        }

        public void Dispose()
        {
            _pipe.Writer.Complete();
            _reader.GetAwaiter().GetResult();
        }
    }
}
