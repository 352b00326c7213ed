using System.Buffers;
using System.Runtime.CompilerServices;
using System.Text;
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
        int written = Encode(key, buffer, _rented);
        Bytes = buffer[..written];
    }

    /// <summary>Writes the key's UTF-8 bytes to <paramref name="buffer"/> (3 bytes a char fit); returns their count.</summary>
    /// <remarks>Not inlined: the vectorised narrowing is long, and inlined into a cache's lookup (which inlines its whole
    /// read) it used up the JIT's inlining budget, so the small helpers of the hit path were called instead.</remarks>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int Encode(ReadOnlySpan<char> key, Span<byte> buffer, byte[]? rented)
    {
        // An ASCII key's UTF-8 bytes are its chars narrowed, which Ascii does with vector instructions and no UTF-8
        // state machine; it stops at the first non-ASCII char, whose key is then encoded in full (the same bytes).
        if (Ascii.FromUtf16(key, buffer, out int written) == OperationStatus.Done) return written;
        var status = Utf8.FromUtf16(key, buffer, out int read, out written, replaceInvalidSequences: false);
        if (status != OperationStatus.Done)
        {
            if (rented is not null) ArrayPool<byte>.Shared.Return(rented);
            ThrowHelper.ThrowInvalidKey(read);
        }
        return written;
    }

    /// <summary>The encoded key.</summary>
    public ReadOnlySpan<byte> Bytes { get; }

    /// <summary>Returns the rented array, if any.</summary>
    public void Dispose()
    {
        if (_rented is not null) ArrayPool<byte>.Shared.Return(_rented);
    }
}
