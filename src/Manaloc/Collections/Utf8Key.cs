using System.Buffers;
using System.Text.Unicode;

namespace Manaloc.Collections;

/// <summary>
/// The UTF-8 bytes of a char key, in the caller's stack buffer when they fit, else in a rented array that
/// <see cref="Dispose"/> returns: <c>using var utf8 = new Utf8Key(key, stackalloc byte[n]);</c>.
/// </summary>
internal readonly ref struct Utf8Key
{
    private readonly byte[]? _rented;

    /// <summary>Encodes <paramref name="key"/>.</summary>
    /// <exception cref="ArgumentException">The key has a lone surrogate (no UTF-8 form).</exception>
    public Utf8Key(ReadOnlySpan<char> key, Span<byte> stack)
    {
        Span<byte> buffer = stack;
        if (key.Length * 3 > buffer.Length)
        {
            _rented = ArrayPool<byte>.Shared.Rent(checked(key.Length * 3));
            buffer = _rented;
        }
        var status = Utf8.FromUtf16(key, buffer, out int read, out int written, replaceInvalidSequences: false);
        if (status != OperationStatus.Done)
        {
            if (_rented is not null) ArrayPool<byte>.Shared.Return(_rented);
            ThrowHelper.ThrowInvalidKey(read);
        }
        Bytes = buffer[..written];
    }

    /// <summary>The encoded key.</summary>
    public ReadOnlySpan<byte> Bytes { get; }

    /// <summary>Returns the rented array, if any.</summary>
    public void Dispose()
    {
        if (_rented is not null) ArrayPool<byte>.Shared.Return(_rented);
    }
}
