using System.Buffers;
using System.Runtime.CompilerServices;
using System.Text;
using System.Text.Unicode;

namespace Manaloc.Collections;

/// <summary>
/// The UTF-8 bytes of a char key, in the caller's stack buffer when they fit, else in a rented array that
/// <see cref="Dispose"/> returns: <c>using var utf8 = new Utf8Key(key, stackalloc byte[n]);</c>.
/// </summary>
/// <remarks>
/// Every string is a key, as it is in a <c>Dictionary&lt;string, T&gt;</c>: a lone surrogate (no UTF-8 form) is written
/// as WTF-8 writes it, its 3-byte generalized UTF-8 form <c>ED A0..BF xx</c>, and every other char as UTF-8 (a surrogate
/// pair as its 4-byte code point). The encoding is injective: the 3-byte form of a surrogate appears in no valid UTF-8,
/// so a key with a lone surrogate never shares bytes with a valid one, and two keys differing in which lone surrogate
/// they hold differ in those bytes. A valid key's bytes are its UTF-8 bytes, unchanged.
/// </remarks>
internal readonly ref struct Utf8Key
{
    private readonly byte[]? _rented;

    /// <summary>Encodes <paramref name="key"/>.</summary>
    public Utf8Key(ReadOnlySpan<char> key, Span<byte> stack)
    {
        Span<byte> buffer = stack;
        if (key.Length * 3 > buffer.Length)
        {
            _rented = ArrayPool<byte>.Shared.Rent(checked(key.Length * 3));
            buffer = _rented;
        }
        int written = Encode(key, buffer);
        Bytes = buffer[..written];
    }

    /// <summary>Writes the key's UTF-8 bytes to <paramref name="buffer"/> (3 bytes a char fit); returns their count.</summary>
    /// <remarks>Not inlined: the vectorised narrowing is long, and inlined into a cache's lookup (which inlines its whole
    /// read) it used up the JIT's inlining budget, so the small helpers of the hit path were called instead.</remarks>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int Encode(ReadOnlySpan<char> key, Span<byte> buffer)
    {
        // An ASCII key's UTF-8 bytes are its chars narrowed, which Ascii does with vector instructions and no UTF-8
        // state machine; it stops at the first non-ASCII char, whose key is then encoded in full (the same bytes).
        if (Ascii.FromUtf16(key, buffer, out int written) == OperationStatus.Done) return written;
        var status = Utf8.FromUtf16(key, buffer, out int read, out written, replaceInvalidSequences: false);
        return status == OperationStatus.Done ? written : EncodeWithLoneSurrogates(key, buffer, read, written);
    }

    /// <summary>
    /// Finishes a key that has a lone surrogate at <paramref name="read"/> (the UTF-8 bytes of the chars before it are
    /// written): each lone surrogate as its 3-byte generalized UTF-8 form (WTF-8), the valid runs between them as UTF-8.
    /// </summary>
    /// <remarks>3 bytes a char still fit: a lone surrogate is one char and 3 bytes, a valid char at most 3 bytes (a pair,
    /// two chars, 4). The decoder stops at a lone surrogate with <see cref="OperationStatus.InvalidData"/> and at a high
    /// surrogate ending the key too (the key is its final block), so each stop is one char to write here.</remarks>
    private static int EncodeWithLoneSurrogates(ReadOnlySpan<char> key, Span<byte> buffer, int read, int written)
    {
        while (true)
        {
            char surrogate = key[read];
            buffer[written] = (byte)(0xE0 | (surrogate >> 12));          // 0xED for every surrogate (D800..DFFF)
            buffer[written + 1] = (byte)(0x80 | ((surrogate >> 6) & 0x3F)); // 0xA0..0xBF: what UTF-8 forbids after 0xED
            buffer[written + 2] = (byte)(0x80 | (surrogate & 0x3F));
            written += 3;
            key = key[(read + 1)..];
            var status = Utf8.FromUtf16(key, buffer[written..], out read, out int more, replaceInvalidSequences: false);
            written += more;
            if (status == OperationStatus.Done) return written;
        }
    }

    /// <summary>The encoded key.</summary>
    public ReadOnlySpan<byte> Bytes { get; }

    /// <summary>Returns the rented array, if any.</summary>
    public void Dispose()
    {
        if (_rented is not null) ArrayPool<byte>.Shared.Return(_rented);
    }
}
