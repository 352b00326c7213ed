using System.Buffers.Binary;
using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using System.Runtime.Intrinsics.Arm;
using System.Runtime.Intrinsics.X86;

namespace Manaloc.Collections;

/// <summary>
/// The cache's hash of a byte key: 8 bytes at a time, each word multiplied into the state and rotated, then
/// MurmurHash3's finalizer (<see cref="MapHashing.Mix"/>) so the low bits (the bucket) and the rest both depend on
/// every byte. Seeded per process, so keys chosen to collide in one process do not collide in another.
/// </summary>
internal static class CacheHashing
{
    private const ulong K = 0x9E3779B97F4A7C15UL;
    private static readonly ulong s_seed = (ulong)Random.Shared.NextInt64() | 1;

    /// <summary>The process's seed (for tests that check the hash against a reference).</summary>
    internal static ulong Seed => s_seed;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ulong Hash(ReadOnlySpan<byte> key)
    {
        int length = key.Length;
        ulong h = s_seed ^ ((ulong)length * K);
        ReadOnlySpan<byte> words = key;
        while (words.Length >= 8)
        {
            h = BitOperations.RotateLeft((h ^ BinaryPrimitives.ReadUInt64LittleEndian(words)) * K, 29);
            words = words[8..];
        }
        int rest = words.Length;
        if (rest > 0)
        {
            // The rest's bytes as one little-endian number (byte i at bits 8i), read in at most two loads instead of a loop
            // of up to seven: a key of 8 bytes or more ends in a word that overlaps the last one hashed, shifted right to
            // drop the overlap; a shorter one of 4 to 7 bytes is two overlapping 4-byte reads, whose shared bytes are equal.
            ulong tail;
            if (length >= 8) tail = BinaryPrimitives.ReadUInt64LittleEndian(key[(length - 8)..]) >> (8 * (8 - rest));
            else if (rest >= 4) tail = BinaryPrimitives.ReadUInt32LittleEndian(key) | ((ulong)BinaryPrimitives.ReadUInt32LittleEndian(key[(rest - 4)..]) << (8 * (rest - 4)));
            else
            {
                tail = 0;
                for (int i = 0; i < rest; i++) tail |= (ulong)key[i] << (8 * i);
            }
            h = BitOperations.RotateLeft((h ^ tail) * K, 29);
        }
        return MapHashing.Mix(h);
    }

    /// <summary>
    /// For a char key of 8 to <paramref name="buffer"/>'s length chars, all ASCII: writes its UTF-8 bytes (the chars
    /// narrowed) to <paramref name="buffer"/> and returns true with <paramref name="hash"/> equal to
    /// <see cref="Hash"/> of those bytes, in one pass. Else false (the buffer's content undefined, the hash 0): the caller
    /// encodes the key in full (<see cref="Utf8Key"/>) and hashes the bytes.
    /// </summary>
    /// <remarks>Why: a lookup by a char key otherwise calls the encoder (length checks, a dispatch on the length, the
    /// vector narrowing), then reads the bytes again to hash them; here each 8 chars are one vector load, one narrowing,
    /// one store and the hash's step on the word narrowed, with one ASCII test for the whole key after the loop (the
    /// chars' bits OR-ed together). The words are the bytes <see cref="Hash"/> reads, in its order: the whole words, then
    /// for a length not a multiple of 8 the last 8 bytes shifted right past the overlap. Shorter keys take the general
    /// path (their tail would need the byte-wise reads).</remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static bool TryNarrowAsciiAndHash(ReadOnlySpan<char> key, Span<byte> buffer, out ulong hash)
    {
        int length = key.Length;
        // Little-endian only: the narrowed word's bytes are then the order Hash reads them in (a constant for the JIT).
        if (!Vector128.IsHardwareAccelerated || !BitConverter.IsLittleEndian || length < 8 || length > buffer.Length)
        {
            hash = 0;
            return false;
        }
        // In bounds: every load reads chars [i, i + 8) with i + 8 <= length, every store bytes [i, i + 8) with
        // i + 8 <= length <= buffer.Length (checked above).
        ref ushort chars = ref Unsafe.As<char, ushort>(ref MemoryMarshal.GetReference(key));
        ref byte bytes = ref MemoryMarshal.GetReference(buffer);
        ulong h = s_seed ^ ((ulong)length * K);
        Vector128<ushort> seen = Vector128<ushort>.Zero;
        nint i = 0;
        for (; i <= length - 8; i += 8)
        {
            var word = Vector128.LoadUnsafe(ref chars, (nuint)i);
            seen |= word;
            ulong narrowed = NarrowLow(word);
            Unsafe.WriteUnaligned(ref Unsafe.Add(ref bytes, i), narrowed);
            h = BitOperations.RotateLeft((h ^ narrowed) * K, 29);
        }
        int rest = length - (int)i;
        if (rest > 0)
        {
            var word = Vector128.LoadUnsafe(ref chars, (nuint)(length - 8));
            seen |= word;
            ulong narrowed = NarrowLow(word);
            Unsafe.WriteUnaligned(ref Unsafe.Add(ref bytes, length - 8), narrowed);
            h = BitOperations.RotateLeft((h ^ (narrowed >> (8 * (8 - rest)))) * K, 29);
        }
        // A char above 0x7F anywhere (its narrowing dropped bits, or it is not one UTF-8 byte): not this path's key.
        if ((seen & Vector128.Create((ushort)0xFF80)) != Vector128<ushort>.Zero)
        {
            hash = 0;
            return false;
        }
        hash = MapHashing.Mix(h);
        return true;
    }

    /// <summary>The low bytes of the 8 chars of <paramref name="word"/>, char i at bits 8i: one instruction where there is
    /// one (x64's pack saturates a char above 0xFF, which only a key the caller then rejects as not ASCII has).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ulong NarrowLow(Vector128<ushort> word)
    {
        if (Sse2.IsSupported) return Sse2.PackUnsignedSaturate(word.AsInt16(), word.AsInt16()).AsUInt64().ToScalar();
        if (AdvSimd.IsSupported) return AdvSimd.ExtractNarrowingLower(word).AsUInt64().ToScalar();
        return Vector128.Narrow(word, word).AsUInt64().ToScalar();
    }
}
