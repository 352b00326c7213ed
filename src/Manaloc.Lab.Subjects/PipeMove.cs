using System.Buffers;
using System.IO.Pipelines;

namespace Manaloc.Lab.Subjects;

/// <summary>
/// The lab's and the benchmarks' <c>pipelines</c> operation: one pipe with a reader task that consumes everything.
/// The writer (the measuring thread) fills and flushes one segment per operation; the pipe's own back-pressure is off (its flush would resume the writer on another
/// thread), so the writer waits for the reader itself once 1 MiB is in flight, until half of it was read.
/// </summary>
public sealed class PipeMove : IDisposable
{
    private const long Window = 1 << 20; // bytes in flight before the writer waits: Kestrel's default pause threshold
    private readonly Pipe _pipe;
    private readonly int _size;
    private readonly Task _reader;
    private long _written;
    private long _consumed;

    /// <summary>A pipe over <paramref name="pool"/> with segments of <paramref name="size"/> bytes, and its reader started.</summary>
    public PipeMove(MemoryPool<byte> pool, int size)
    {
        _size = size;
        _pipe = new Pipe(new PipeOptions(pool: pool, minimumSegmentSize: size, pauseWriterThreshold: 0, useSynchronizationContext: false));
        _reader = Task.Run(ReadAll);
    }

    /// <summary>Bytes the reader has consumed so far.</summary>
    public long BytesMoved => Volatile.Read(ref _consumed);

    /// <summary>Writes <paramref name="segments"/> segments, each filled and flushed, and returns once the reader has them all.</summary>
    public void Move(long segments)
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
            if (_written - Volatile.Read(ref _consumed) > Window) WaitForReader(_written - Window / 2); // resume at half, as a pipe does
        }
        WaitForReader(_written); // the sample ends when the reader has everything
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
            foreach (var memory in result.Buffer) { if (!memory.IsEmpty) sum += memory.Span[0] + memory.Span[^1]; } // touch each segment
            Volatile.Write(ref _consumed, _consumed + result.Buffer.Length); // the writer waits on this
            reader.AdvanceTo(result.Buffer.End);
            if (result.IsCompleted) break;
        }
        await reader.CompleteAsync().ConfigureAwait(false);
        GC.KeepAlive(sum);
    }

    /// <summary>Completes the pipe and waits for the reader.</summary>
    public void Dispose()
    {
        _pipe.Writer.Complete();
        _reader.GetAwaiter().GetResult();
    }
}
