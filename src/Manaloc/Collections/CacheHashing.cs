using System.Buffers.Binary;
using System.Numerics;
using System.Runtime.CompilerServices;

namespace Manaloc.Collections;

/// <summary>
/// The cache's hash of a byte key: 8 bytes at a time, each word multiplied into the state and rotated, then
/// MurmurHash3's finalizer (<see cref="MapHashing.Mix"/>) so the low bits (the bucket) and the rest both depend on
/// every byte. Seeded per process, so keys chosen to collide in one process do not collide in another.
/// </summary>
internal static class CacheHashing
{
    private static readonly ulong s_seed = (ulong)Random.Shared.NextInt64() | 1;

    /// <summary>The process's seed (for tests that check the hash against a reference).</summary>
    internal static ulong Seed => s_seed;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ulong Hash(ReadOnlySpan<byte> key)
    {
        const ulong K = 0x9E3779B97F4A7C15UL;
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
}
