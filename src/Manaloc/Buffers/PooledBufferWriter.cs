using System.Buffers;
using System.IO.Pipelines;
using System.Runtime.CompilerServices;

namespace Manaloc.Buffers;

/// <summary>
/// An <see cref="IBufferWriter{T}"/> of bytes that writes into arrays rented from a <see cref="BufferManager"/> and
/// never copies when it grows; what was written is a <see cref="ReadOnlySequence{T}"/> over those arrays.
/// <c>using var w = new PooledBufferWriter(); JsonSerializer.Serialize(new Utf8JsonWriter(w), value);</c>
/// </summary>
/// <remarks>
/// <para>Why: <see cref="ArrayBufferWriter{T}"/> keeps everything in one array, so growing allocates a new array
/// (on the large-object heap past 85 KB) and copies what was written, about twice the payload in copies; this writer
/// appends an array from the pool instead (each twice the last, up to 1 MiB, or what
/// <see cref="GetMemory"/> asks for), so bytes are written once, and after warm-up writing allocates nothing
/// besides the writer itself. The price: the output is a sequence of segments, not one span.</para>
/// <para>Contract: the <see cref="IBufferWriter{T}"/> contract as <see cref="ArrayBufferWriter{T}"/> implements it: <see cref="GetMemory"/> and <see cref="GetSpan"/> return at
/// least <c>sizeHint</c> bytes (at least one for 0; all that is free in the current array); a negative
/// <c>sizeHint</c> throws <see cref="ArgumentException"/>; <see cref="Advance"/> with a negative count throws
/// <see cref="ArgumentException"/>, and past the end of the memory last returned <see cref="InvalidOperationException"/>.
/// When the current array has less free than asked for, the writer moves on to a new array and the old one's
/// unused end is skipped (never part of the output). Not <see cref="ArrayBufferWriter{T}"/>'s other members: what was
/// written is <see cref="WrittenSequence"/> (segments; there is no <c>WrittenMemory</c> or <c>WrittenSpan</c>, which would need
/// one array), <see cref="Reset"/> stands for <c>Clear</c> and <c>ResetWrittenCount</c>, and there is no <c>Capacity</c> or
/// <c>FreeCapacity</c> (the writer grows without limit).</para>
/// <para>Answering an HTTP request: the response is written after the handler returns, so a writer the handler disposes
/// (<c>using</c>) must not be handed to the response as <see cref="WrittenSequence"/> or its segments: by then its arrays are
/// another request's. Hand over the writer itself to a result that disposes it after the body is written (Manaloc.AspNetCore's
/// <c>ManalocResults.Bytes</c>), or copy into the response before returning (<see cref="CopyToAsync(PipeWriter, CancellationToken)"/>).</para>
/// <para>Lifetime: <see cref="Reset"/> forgets what was written, keeps the first array (so a writer reused for small
/// messages rents nothing) and returns the others; <see cref="Dispose"/> returns every array, once. A sequence or
/// memory taken from the writer is valid until the next Reset or Dispose; after Dispose every member but Dispose
/// throws <see cref="ObjectDisposedException"/>.</para>
/// <para>Thread safety: none, like <see cref="ArrayBufferWriter{T}"/>: one writer, one thread at a time.</para>
/// </remarks>
public sealed class PooledBufferWriter : IBufferWriter<byte>, IDisposable
{
    private SegmentChain _chain;
    private byte[] _current = []; // the last segment's array ([] before the first write and after Dispose)
    private int _index;           // bytes written into _current
    private long _before;         // bytes written into earlier segments (the last segment's Start)
    private bool _disposed;

    /// <summary>Creates an empty writer over <paramref name="manager"/> (<see cref="BufferManager.Shared"/> when null). Rents nothing until the first write.</summary>
    public PooledBufferWriter(BufferManager? manager = null)
    {
        _chain = new SegmentChain(manager ?? BufferManager.Shared);
    }

    /// <summary>The buffer manager the arrays come from.</summary>
    public BufferManager Manager => _chain.Manager;

    /// <summary>Bytes written (advanced) since creation or the last <see cref="Reset"/>.</summary>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    public long WrittenCount
    {
        get
        {
            if (_disposed) ThrowDisposed();
            return _before + _index;
        }
    }

    /// <summary>Marks <paramref name="count"/> bytes of the memory last returned by <see cref="GetMemory"/> or <see cref="GetSpan"/> as written.</summary>
    /// <exception cref="ArgumentException"><paramref name="count"/> is negative.</exception>
    /// <exception cref="InvalidOperationException"><paramref name="count"/> goes past the end of that memory.</exception>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Advance(int count)
    {
        if ((uint)count > (uint)(_current.Length - _index) || _disposed) AdvanceRejected(count);
        _index += count;
    }

    /// <summary>Memory of at least <paramref name="sizeHint"/> bytes (at least one when 0) to write into, then <see cref="Advance"/>.</summary>
    /// <exception cref="ArgumentException"><paramref name="sizeHint"/> is negative.</exception>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public Memory<byte> GetMemory(int sizeHint = 0)
    {
        int free = _current.Length - _index;
        if ((uint)sizeHint > (uint)free || free == 0) Grow(sizeHint); // a hint of 0 asks for 1 byte; a negative one is huge as uint and goes to Grow, which throws
        return new Memory<byte>(_current, _index, _current.Length - _index);
    }

    /// <summary>A span of at least <paramref name="sizeHint"/> bytes (at least one when 0) to write into, then <see cref="Advance"/>.</summary>
    /// <exception cref="ArgumentException"><paramref name="sizeHint"/> is negative.</exception>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public Span<byte> GetSpan(int sizeHint = 0)
    {
        int free = _current.Length - _index;
        if ((uint)sizeHint > (uint)free || free == 0) Grow(sizeHint);
        return new Span<byte>(_current, _index, _current.Length - _index);
    }

    /// <summary>Everything written, as a sequence over the writer's arrays (valid until the next <see cref="Reset"/> or <see cref="Dispose"/>).</summary>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    public ReadOnlySequence<byte> WrittenSequence
    {
        get
        {
            if (_disposed) ThrowDisposed();
            var tail = _chain.Tail;
            if (tail is null) return ReadOnlySequence<byte>.Empty;
            tail.Expose(_index); // earlier segments were exposed when the writer left them
            return new ReadOnlySequence<byte>(_chain.Head!, 0, tail, _index);
        }
    }

    /// <summary>Copies everything written to <paramref name="destination"/>.</summary>
    /// <exception cref="ArgumentException"><paramref name="destination"/> is shorter than <see cref="WrittenCount"/>.</exception>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    public void CopyTo(Span<byte> destination)
    {
        long count = WrittenCount;
        if (destination.Length < count)
            ThrowHelper.ThrowArgument(nameof(destination), $"The destination holds {destination.Length:N0} bytes; the writer has written {count:N0}.");
        WrittenSequence.CopyTo(destination);
    }

    /// <summary>Writes everything written to <paramref name="destination"/> (another writer: a pipe, a serializer's output).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="destination"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    public void CopyTo(IBufferWriter<byte> destination)
    {
        if (destination is null) ThrowHelper.ThrowArgumentNull(nameof(destination));
        foreach (var memory in WrittenSequence) destination.Write(memory.Span);
    }

    /// <summary>Writes everything written to <paramref name="destination"/>.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="destination"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    public void CopyTo(Stream destination)
    {
        if (destination is null) ThrowHelper.ThrowArgumentNull(nameof(destination));
        foreach (var memory in WrittenSequence) destination.Write(memory.Span);
    }

    /// <inheritdoc cref="CopyToAsync(Stream, CancellationToken)"/>
    public Task CopyToAsync(Stream destination) => CopyToAsync(destination, CancellationToken.None);

    /// <summary>Writes everything written to <paramref name="destination"/> asynchronously. Do not write to this writer until the task completes.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="destination"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was canceled.</exception>
    public async Task CopyToAsync(Stream destination, CancellationToken cancellationToken)
    {
        if (destination is null) ThrowHelper.ThrowArgumentNull(nameof(destination));
        foreach (var memory in WrittenSequence) await destination.WriteAsync(memory, cancellationToken).ConfigureAwait(false);
    }

    /// <inheritdoc cref="CopyToAsync(PipeWriter, CancellationToken)"/>
    public ValueTask<FlushResult> CopyToAsync(PipeWriter destination) => CopyToAsync(destination, CancellationToken.None);

    /// <summary>
    /// Writes everything written to <paramref name="destination"/> (a response's <c>BodyWriter</c>, a pipe) segment by segment,
    /// flushing after each, so the pipe's back-pressure holds: at most one segment of this writer is in the pipe's buffers at once.
    /// Stops early when a flush reports the reader completed (the client went away) or the flush canceled.
    /// </summary>
    /// <returns>The last flush's result (a default, not completed, result when nothing was written).</returns>
    /// <remarks>Each segment is copied into the pipe's own memory before its flush, so once the returned task completes this writer's
    /// arrays are no longer referenced by the pipe and may be disposed. Do not write to this writer until the task completes.</remarks>
    /// <exception cref="ArgumentNullException"><paramref name="destination"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was canceled during a flush.</exception>
    public async ValueTask<FlushResult> CopyToAsync(PipeWriter destination, CancellationToken cancellationToken)
    {
        if (destination is null) ThrowHelper.ThrowArgumentNull(nameof(destination));
        var flush = default(FlushResult);
        foreach (var memory in WrittenSequence)
        {
            flush = await destination.WriteAsync(memory, cancellationToken).ConfigureAwait(false);
            if (flush.IsCompleted || flush.IsCanceled) break;
        }
        return flush;
    }

    /// <summary>A new array holding everything written.</summary>
    /// <exception cref="InvalidOperationException">More was written than one array can hold.</exception>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    public byte[] ToArray()
    {
        long count = WrittenCount;
        if (count > Array.MaxLength) ThrowHelper.ThrowInvalidOperation($"The writer holds {count:N0} bytes, more than one array can ({Array.MaxLength:N0}); use WrittenSequence or CopyTo.");
        if (count == 0) return [];
        var array = GC.AllocateUninitializedArray<byte>((int)count);
        WrittenSequence.CopyTo(array);
        return array;
    }

    /// <summary>Forgets what was written: keeps the first array for the next writes and returns the others to the manager.</summary>
    /// <remarks>Sequences and memory taken before become invalid (their bytes will be overwritten; over a manager that poisons
    /// returned arrays, the kept array is poisoned too: <see cref="BufferManagerOptions.PoisonReturnedBuffers"/>).</remarks>
    /// <exception cref="ObjectDisposedException">The writer was disposed.</exception>
    public void Reset()
    {
        if (_disposed) ThrowDisposed();
        var head = _chain.Head;
        if (head is null) return;
        _chain.ReleaseAfter(head);
        if (_chain.Manager.PoisonsReturnedBuffers) BufferManager.Poison(head.Array); // kept, but what was written is gone as surely as a returned array's
        _current = head.Array;
        _index = 0;
        _before = 0;
    }

    /// <summary>Returns every array to the manager (each once); later calls do nothing.</summary>
    public void Dispose()
    {
        if (_disposed) return;
        _disposed = true;
        _current = []; // the fast paths see no free space and go to the checks
        _index = 0;
        _before = 0;
        _chain.ReleaseAll();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void Grow(int sizeHint)
    {
        if (_disposed) ThrowDisposed();
        if (sizeHint < 0) ThrowHelper.ThrowArgument(nameof(sizeHint), $"The size hint must not be negative (it was {sizeHint}).");
        if (sizeHint == 0) sizeHint = 1;
        var tail = _chain.Tail;
        BufferSegment node;
        if (tail is not null && _index == 0)
        {
            node = _chain.ReplaceTailArray(sizeHint); // empty and too small: trade its array rather than keep an empty segment
        }
        else
        {
            if (tail is not null)
            {
                tail.Expose(_index); // left for good: the sequence sees exactly what was written into it
                _before += _index;
            }
            node = _chain.Append(sizeHint, _before);
        }
        _current = node.Array;
        _index = 0;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void AdvanceRejected(int count)
    {
        if (_disposed) ThrowDisposed();
        if (count < 0) ThrowHelper.ThrowArgument(nameof(count), $"Cannot advance by a negative count ({count}).");
        ThrowHelper.ThrowInvalidOperation($"Cannot advance past the end of the buffer, which has a size of {_current.Length - _index} (advanced by {count}).");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowDisposed() => ThrowHelper.ThrowSegmentsDisposed(nameof(PooledBufferWriter), Manager.Name);

    /// <summary>What was written and over which manager: <c>PooledBufferWriter (10 bytes written, BufferManager 'shared')</c>, or <c>(disposed)</c>.</summary>
    public override string ToString()
        => _disposed ? $"{nameof(PooledBufferWriter)} (disposed)" : $"{nameof(PooledBufferWriter)} ({Plural.Of(WrittenCount, "byte")} written, BufferManager '{Manager.Name}')";
}
