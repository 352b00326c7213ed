namespace Manaloc.Buffers;

/// <summary>The asynchronous overloads: the data is in memory, so each completes synchronously, as MemoryStream's do.</summary>
public sealed partial class PooledBufferStream
{
    /// <summary>Reads as <see cref="Read(byte[], int, int)"/>, synchronously; a cancelled token gives a cancelled task, an error a faulted one.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="offset"/> or <paramref name="count"/> is out of range.</exception>
    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
    {
        ValidateBufferArguments(buffer, offset, count);
        if (cancellationToken.IsCancellationRequested) return Task.FromCanceled<int>(cancellationToken);
        try
        {
            return Task.FromResult(Read(new Span<byte>(buffer, offset, count)));
        }
        catch (Exception e)
        {
            return Task.FromException<int>(e);
        }
    }

    /// <summary>Reads as <see cref="Read(Span{byte})"/>, synchronously; a cancelled token gives a cancelled task, an error a faulted one.</summary>
#pragma warning disable RS0027 // Stream's own signature: an override cannot choose its parameters
    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
#pragma warning restore RS0027
    {
        if (cancellationToken.IsCancellationRequested) return ValueTask.FromCanceled<int>(cancellationToken);
        try
        {
            return new ValueTask<int>(Read(buffer.Span));
        }
        catch (Exception e)
        {
            return ValueTask.FromException<int>(e);
        }
    }

    /// <summary>Writes as <see cref="Write(byte[], int, int)"/>, synchronously; a cancelled token gives a cancelled task, an error a faulted one.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="buffer"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="offset"/> or <paramref name="count"/> is out of range.</exception>
    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
    {
        ValidateBufferArguments(buffer, offset, count);
        if (cancellationToken.IsCancellationRequested) return Task.FromCanceled(cancellationToken);
        try
        {
            Write(new ReadOnlySpan<byte>(buffer, offset, count));
            return Task.CompletedTask;
        }
        catch (Exception e)
        {
            return Task.FromException(e);
        }
    }

    /// <summary>Writes as <see cref="Write(ReadOnlySpan{byte})"/>, synchronously; a cancelled token gives a cancelled task, an error a faulted one.</summary>
#pragma warning disable RS0027 // Stream's own signature: an override cannot choose its parameters
    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
#pragma warning restore RS0027
    {
        if (cancellationToken.IsCancellationRequested) return ValueTask.FromCanceled(cancellationToken);
        try
        {
            Write(buffer.Span);
            return ValueTask.CompletedTask;
        }
        catch (Exception e)
        {
            return ValueTask.FromException(e);
        }
    }

    /// <summary>Does nothing, as <see cref="Flush"/>; a cancelled token gives a cancelled task.</summary>
    public override Task FlushAsync(CancellationToken cancellationToken)
        => cancellationToken.IsCancellationRequested ? Task.FromCanceled(cancellationToken) : Task.CompletedTask;

    /// <summary>Writes the bytes from the position to the end into <paramref name="destination"/> asynchronously, segment by segment, and moves the position to the end.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="destination"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="bufferSize"/> is not positive.</exception>
    /// <exception cref="NotSupportedException"><paramref name="destination"/> cannot be written.</exception>
    /// <exception cref="ObjectDisposedException">This stream or <paramref name="destination"/> was disposed.</exception>
    public override Task CopyToAsync(Stream destination, int bufferSize, CancellationToken cancellationToken)
    {
        ValidateCopyToArguments(destination, bufferSize);
        EnsureNotClosed();
        if (cancellationToken.IsCancellationRequested) return Task.FromCanceled(cancellationToken);
        return CopyToAsyncCore(destination, cancellationToken);
    }

    private async Task CopyToAsyncCore(Stream destination, CancellationToken cancellationToken)
    {
        // Not thread-safe, like the rest: the caller does not touch the stream until the task completes.
        while (_position < _length)
        {
            var segment = Locate(_position);
            int offset = (int)(_position - segment.Start);
            int count = (int)Math.Min(segment.Array.Length - offset, _length - _position);
            await destination.WriteAsync(segment.Array.AsMemory(offset, count), cancellationToken).ConfigureAwait(false);
            _position += count;
        }
    }
}
