using System.Buffers;
using System.Runtime.CompilerServices;

namespace Manaloc.Buffers;

/// <summary>
/// A growable in-memory <see cref="Stream"/> over arrays rented from a <see cref="BufferManager"/>: a
/// <see cref="MemoryStream"/> that never copies when it grows and gives its arrays back on Dispose.
/// </summary>
/// <remarks>
/// <para>Why: a <see cref="MemoryStream"/> used as a growable buffer doubles one array as it grows (copying everything
/// so far, and allocating on the large-object heap past 85 KB) and leaves it to the GC. This stream appends pooled
/// arrays (each twice the last, up to 1 MiB), reads and writes across them, and returns them
/// on Dispose, so a warm process writes megabytes without allocating arrays. It bounds what it keeps by the
/// manager's limits (<see cref="BufferManagerOptions.MaxRetainedBytesPerClass"/>), not by how large a stream once grew.</para>
/// <para>Behaviour: <see cref="MemoryStream"/>'s, input for input (a model-based test compares the two): lengths and
/// positions up to <see cref="int.MaxValue"/>; seeking past the end and writing zero-fills the gap (even a write of
/// zero bytes moves the length there, as MemoryStream's does); <see cref="SetLength"/> shrinks or grows, and bytes it
/// exposes read as zero; the same exceptions in the same order (after Dispose: <see cref="ObjectDisposedException"/>,
/// except <see cref="SetLength"/>, which throws <see cref="NotSupportedException"/> as MemoryStream's does, and
/// <see cref="Flush"/>, which does nothing). Differences: after Dispose the arrays are gone, so
/// <see cref="ToArray"/> throws and <see cref="TryGetBuffer"/> returns false (MemoryStream keeps its array);
/// <see cref="TryGetBuffer"/> succeeds only while the data lies in the first array; there is no <c>GetBuffer</c>.
/// Asynchronous methods complete synchronously.</para>
/// <para><see cref="GetReadOnlySequence"/> shows the whole content without copying; it is valid until the next
/// write, <see cref="SetLength"/> or Dispose.</para>
/// <para>Thread safety: none, like <see cref="MemoryStream"/>: one stream, one thread at a time.</para>
/// </remarks>
public sealed partial class PooledBufferStream : Stream
{
    private SegmentChain _chain;
    private BufferSegment? _cursor; // the segment last read or written: sequential access finds its place without a search
    private long _length;
    private long _position;
    private bool _disposed;

    /// <summary>Creates an empty stream over <paramref name="manager"/> (<see cref="BufferManager.Shared"/> when null). Rents nothing until the first write.</summary>
    public PooledBufferStream(BufferManager? manager = null)
    {
        _chain = new SegmentChain(manager ?? BufferManager.Shared);
    }

    /// <summary>The buffer manager the arrays come from.</summary>
    public BufferManager Manager => _chain.Manager;

    /// <summary>True until disposed.</summary>
    public override bool CanRead => !_disposed;

    /// <summary>True until disposed.</summary>
    public override bool CanSeek => !_disposed;

    /// <summary>True until disposed.</summary>
    public override bool CanWrite => !_disposed;

    /// <summary>The bytes in the stream.</summary>
    /// <exception cref="ObjectDisposedException">The stream was disposed.</exception>
    public override long Length
    {
        get
        {
            EnsureNotClosed();
            return _length;
        }
    }

    /// <summary>Where the next read or write starts; may lie past the end (a write there zero-fills the gap).</summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is negative or above <see cref="int.MaxValue"/>.</exception>
    /// <exception cref="ObjectDisposedException">The stream was disposed.</exception>
    public override long Position
    {
        get
        {
            EnsureNotClosed();
            return _position;
        }
        set
        {
            ArgumentOutOfRangeException.ThrowIfNegative(value); // before the disposed check, as MemoryStream
            EnsureNotClosed();
            if (value > int.MaxValue) ThrowHelper.ThrowArgumentOutOfRange(nameof(value), value, "The stream's position must not exceed int.MaxValue.");
            _position = value;
        }
    }

    /// <summary>Moves the position; returns the new one.</summary>
    /// <exception cref="ArgumentException"><paramref name="origin"/> is not a <see cref="SeekOrigin"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The new position would exceed <see cref="int.MaxValue"/>.</exception>
    /// <exception cref="IOException">The new position would be negative.</exception>
    /// <exception cref="ObjectDisposedException">The stream was disposed.</exception>
    public override long Seek(long offset, SeekOrigin origin)
    {
        EnsureNotClosed();
        long from = origin switch
        {
            SeekOrigin.Begin => 0,
            SeekOrigin.Current => _position,
            SeekOrigin.End => _length,
            _ => ThrowInvalidOrigin(origin),
        };
        if (offset > int.MaxValue - from) ThrowHelper.ThrowArgumentOutOfRange(nameof(offset), offset, "The stream's position must not exceed int.MaxValue.");
        long target = unchecked(from + offset); // cannot overflow upward (checked above); downward it goes negative
        if (target < 0) throw new IOException("An attempt was made to move the position before the beginning of the stream.");
        _position = target;
        return target;
    }

    /// <summary>Sets the length: shrinking drops the end (the arrays stay for later writes); growing exposes zeros.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="value"/> is negative or above <see cref="int.MaxValue"/>.</exception>
    /// <exception cref="NotSupportedException">The stream was disposed (as MemoryStream: a disposed stream cannot be written).</exception>
    public override void SetLength(long value)
    {
        if ((ulong)value > int.MaxValue) ThrowHelper.ThrowArgumentOutOfRange(nameof(value), value, "The stream's length must be between 0 and int.MaxValue.");
        if (_disposed) throw new NotSupportedException("The stream was disposed, so it cannot be written.");
        if (value > _length)
        {
            EnsureCapacity(value);
            Clear(_length, value);
        }
        _length = value;
        if (_position > value) _position = value;
    }

    /// <summary>Does nothing: the bytes are in memory already (also after Dispose, as MemoryStream).</summary>
    public override void Flush()
    {
    }

    /// <summary>Reads up to <paramref name="count"/> bytes into <paramref name="buffer"/> at <paramref name="offset"/>; returns how many (0 at the end).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="offset"/> or <paramref name="count"/> is negative, or they exceed the buffer.</exception>
    /// <exception cref="ObjectDisposedException">The stream was disposed.</exception>
    public override int Read(byte[] buffer, int offset, int count)
    {
        ValidateBufferArguments(buffer, offset, count);
        return Read(new Span<byte>(buffer, offset, count));
    }

    /// <summary>Reads into <paramref name="buffer"/>; returns how many bytes (0 at the end).</summary>
    /// <exception cref="ObjectDisposedException">The stream was disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)] // into Read(byte[], int, int): a call through Stream pays one virtual call, not two
    public override int Read(Span<byte> buffer)
    {
        long position = _position;
        var cursor = _cursor;
        long available = _length - position;
        long offset;
        // Fast path: not disposed (a disposed stream has no cursor), something to read, and all of it (up to the end)
        // in the segment last used (sequential reads). Everything else, the checks included, is ReadSlow's.
        if (cursor is not null && available > 0 && (offset = position - cursor.Start) >= 0)
        {
            int count = (int)Math.Min(available, buffer.Length);
            if (count > 0 && offset + count <= cursor.Array.Length)
            {
                cursor.Array.AsSpan((int)offset, count).CopyTo(buffer);
                _position = position + count;
                return count;
            }
        }
        return ReadSlow(buffer);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private int ReadSlow(Span<byte> buffer)
    {
        EnsureNotClosed();
        long position = _position;
        long available = _length - position;
        if (available <= 0 || buffer.IsEmpty) return 0;
        int count = (int)Math.Min(available, buffer.Length);
        CopyOut(position, buffer[..count]);
        _position = position + count;
        return count;
    }

    /// <summary>Reads one byte, or -1 at the end.</summary>
    /// <exception cref="ObjectDisposedException">The stream was disposed.</exception>
    public override int ReadByte()
    {
        EnsureNotClosed();
        if (_position >= _length) return -1;
        var segment = Locate(_position);
        return segment.Array[(int)(_position++ - segment.Start)];
    }

    /// <summary>Writes <paramref name="count"/> bytes of <paramref name="buffer"/> from <paramref name="offset"/> at the position.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="offset"/> or <paramref name="count"/> is negative, or they exceed the buffer.</exception>
    /// <exception cref="IOException">The stream would grow past <see cref="int.MaxValue"/> bytes.</exception>
    /// <exception cref="ObjectDisposedException">The stream was disposed.</exception>
    public override void Write(byte[] buffer, int offset, int count)
    {
        ValidateBufferArguments(buffer, offset, count);
        Write(new ReadOnlySpan<byte>(buffer, offset, count));
    }

    /// <summary>Writes <paramref name="buffer"/> at the position (past the end: the gap reads as zeros).</summary>
    /// <exception cref="IOException">The stream would grow past <see cref="int.MaxValue"/> bytes.</exception>
    /// <exception cref="ObjectDisposedException">The stream was disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)] // into Write(byte[], int, int): a call through Stream pays one virtual call, not two
    public override void Write(ReadOnlySpan<byte> buffer)
    {
        long position = _position;
        var cursor = _cursor;
        long offset;
        // Fast path: not disposed (a disposed stream has no cursor), no gap to zero-fill, and the whole write lies in
        // the segment last used (sequential writes). Everything else, the checks included, is WriteSlow's.
        if (cursor is not null && position <= _length && (offset = position - cursor.Start) >= 0 && offset + buffer.Length <= cursor.Array.Length)
        {
            buffer.CopyTo(cursor.Array.AsSpan((int)offset));
            _position = position += buffer.Length;
            if (position > _length) _length = position;
            return;
        }
        WriteSlow(buffer);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void WriteSlow(ReadOnlySpan<byte> buffer)
    {
        EnsureNotClosed();
        long position = _position;
        long end = position + buffer.Length;
        if (end > int.MaxValue) ThrowTooLong();
        if (end > _length) Extend(end); // also for an empty write past the end, as MemoryStream
        CopyIn(position, buffer);
        _position = end;
    }

    /// <summary>Writes one byte at the position.</summary>
    /// <exception cref="IOException">The stream would grow past <see cref="int.MaxValue"/> bytes.</exception>
    /// <exception cref="ObjectDisposedException">The stream was disposed.</exception>
    public override void WriteByte(byte value)
    {
        EnsureNotClosed();
        long position = _position;
        if (position >= _length)
        {
            if (position >= int.MaxValue) ThrowTooLong();
            Extend(position + 1);
        }
        var segment = Locate(position);
        segment.Array[(int)(position - segment.Start)] = value;
        _position = position + 1;
    }

    /// <summary>Writes the bytes from the position to the end into <paramref name="destination"/>, without an intermediate buffer, and moves the position to the end.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="destination"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="bufferSize"/> is not positive.</exception>
    /// <exception cref="NotSupportedException"><paramref name="destination"/> cannot be written.</exception>
    /// <exception cref="ObjectDisposedException">This stream or <paramref name="destination"/> was disposed.</exception>
    public override void CopyTo(Stream destination, int bufferSize)
    {
        ValidateCopyToArguments(destination, bufferSize);
        EnsureNotClosed();
        while (_position < _length)
        {
            var segment = Locate(_position);
            int offset = (int)(_position - segment.Start);
            int count = (int)Math.Min(segment.Array.Length - offset, _length - _position);
            destination.Write(segment.Array, offset, count);
            _position += count;
        }
    }

    /// <summary>Writes the whole content (whatever the position) to <paramref name="stream"/>, as <see cref="MemoryStream.WriteTo"/>.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="stream"/> is null.</exception>
    /// <exception cref="ObjectDisposedException">The stream was disposed.</exception>
    public void WriteTo(Stream stream)
    {
        if (stream is null) ThrowHelper.ThrowArgumentNull(nameof(stream));
        EnsureNotClosed();
        foreach (var memory in GetReadOnlySequence()) stream.Write(memory.Span);
    }

    /// <summary>The whole content as a sequence over the stream's arrays, without copying; valid until the next write, <see cref="SetLength"/> or Dispose.</summary>
    /// <exception cref="ObjectDisposedException">The stream was disposed.</exception>
    public ReadOnlySequence<byte> GetReadOnlySequence()
    {
        EnsureNotClosed();
        return _chain.FullSegmentsSequence(_length);
    }

    /// <summary>A new array with the whole content.</summary>
    /// <exception cref="ObjectDisposedException">The stream was disposed (its arrays went back to the manager).</exception>
    public byte[] ToArray()
    {
        EnsureNotClosed();
        if (_length == 0) return [];
        var array = GC.AllocateUninitializedArray<byte>((int)_length);
        CopyOut(0, array);
        return array;
    }

    /// <summary>The content as one array segment, when it lies in the stream's first array (always true while at most 4 KiB were written).</summary>
    /// <returns>False when the content spans arrays, or the stream was disposed.</returns>
    public bool TryGetBuffer(out ArraySegment<byte> buffer)
    {
        var head = _chain.Head;
        if (!_disposed && (head is null ? _length == 0 : _length <= head.Array.Length))
        {
            buffer = head is null ? ArraySegment<byte>.Empty : new ArraySegment<byte>(head.Array, 0, (int)_length);
            return true;
        }
        buffer = default;
        return false;
    }

    /// <summary>Returns every array to the manager (each once); later calls do nothing.</summary>
    protected override void Dispose(bool disposing)
    {
        if (!_disposed)
        {
            _disposed = true;
            _cursor = null;
            _chain.ReleaseAll();
        }
        base.Dispose(disposing);
    }

    /// <summary>The stream's length, position and manager: <c>PooledBufferStream (length 10, position 3, BufferManager 'shared')</c>, or <c>(disposed)</c>.</summary>
    public override string ToString()
        => _disposed ? $"{nameof(PooledBufferStream)} (disposed)" : $"{nameof(PooledBufferStream)} (length {_length:N0}, position {_position:N0}, BufferManager '{Manager.Name}')";

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void EnsureNotClosed()
    {
        if (_disposed) ThrowDisposed();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowDisposed() => ThrowHelper.ThrowSegmentsDisposed(nameof(PooledBufferStream), Manager.Name);

    /// <summary>Grows the length to <paramref name="end"/>: rents what is missing and zero-fills from the old length to the position (what the write will not cover).</summary>
    private void Extend(long end)
    {
        EnsureCapacity(end);
        if (_position > _length) Clear(_length, _position);
        _length = end;
    }

    private void EnsureCapacity(long end)
    {
        while (_chain.Capacity < end)
        {
            long missing = end - _chain.Capacity;
            _chain.Append((int)Math.Min(missing, SegmentChain.MaxSegmentSize), _chain.Capacity);
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private BufferSegment Locate(long position)
    {
        var cursor = _cursor;
        if (cursor is not null && position >= cursor.Start && position - cursor.Start < cursor.Array.Length) return cursor;
        return _cursor = _chain.Find(position, cursor);
    }

    private void CopyIn(long position, ReadOnlySpan<byte> source)
    {
        while (!source.IsEmpty)
        {
            var segment = Locate(position);
            int offset = (int)(position - segment.Start);
            int count = Math.Min(segment.Array.Length - offset, source.Length);
            source[..count].CopyTo(segment.Array.AsSpan(offset, count));
            source = source[count..];
            position += count;
        }
    }

    private void CopyOut(long position, Span<byte> destination)
    {
        while (!destination.IsEmpty)
        {
            var segment = Locate(position);
            int offset = (int)(position - segment.Start);
            int count = Math.Min(segment.Array.Length - offset, destination.Length);
            segment.Array.AsSpan(offset, count).CopyTo(destination);
            destination = destination[count..];
            position += count;
        }
    }

    /// <summary>Zeroes positions [<paramref name="from"/>, <paramref name="to"/>): pooled arrays hold old bytes, and MemoryStream shows zeros there.</summary>
    private void Clear(long from, long to)
    {
        while (from < to)
        {
            var segment = Locate(from);
            int offset = (int)(from - segment.Start);
            int count = (int)Math.Min(segment.Array.Length - offset, to - from);
            segment.Array.AsSpan(offset, count).Clear();
            from += count;
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowTooLong() => throw new IOException("Stream was too long: a PooledBufferStream holds at most int.MaxValue bytes.");

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static long ThrowInvalidOrigin(SeekOrigin origin)
    {
        ThrowHelper.ThrowArgument(nameof(origin), $"Invalid seek origin {origin}.");
        return 0;
    }
}
