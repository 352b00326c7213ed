using System.Numerics;
using Manaloc.Collections;

namespace Manaloc.Tests.Collections;

/// <summary>The cache's key hash against its definition, byte by byte.</summary>
public sealed class CacheHashingTests
{
    /// <summary>The definition: 8-byte little-endian words multiplied in and rotated, the rest's bytes one by one as one
    /// more number, then the finalizer. The hash reads the rest in overlapping loads; every length and offset must give this.</summary>
    private static ulong Reference(ReadOnlySpan<byte> key)
    {
        const ulong K = 0x9E3779B97F4A7C15UL;
        ulong h = CacheHashing.Seed ^ ((ulong)key.Length * K);
        int i = 0;
        for (; i + 8 <= key.Length; i += 8)
        {
            ulong word = 0;
            for (int b = 0; b < 8; b++) word |= (ulong)key[i + b] << (8 * b);
            h = BitOperations.RotateLeft((h ^ word) * K, 29);
        }
        if (i < key.Length)
        {
            ulong tail = 0;
            for (int b = 0; i + b < key.Length; b++) tail |= (ulong)key[i + b] << (8 * b);
            h = BitOperations.RotateLeft((h ^ tail) * K, 29);
        }
        return MapHashing.Mix(h);
    }

    [Fact]
    public void The_hash_of_every_length_up_to_80_and_every_offset_in_a_buffer_is_the_byte_by_byte_definition()
    {
        var random = new Random(33);
        var buffer = new byte[96];
        random.NextBytes(buffer);
        for (int length = 0; length <= 80; length++)
        {
            for (int offset = 0; offset < 8; offset++)
            {
                var key = buffer.AsSpan(offset, length);
                Assert.Equal(Reference(key), CacheHashing.Hash(key));
            }
        }
    }

    [Fact]
    public void Keys_differing_in_any_one_byte_hash_apart()
    {
        // The overlapping read of the rest must take each of its bytes: a change in any byte changes the hash.
        for (int length = 1; length <= 23; length++)
        {
            var key = new byte[length];
            ulong hash = CacheHashing.Hash(key);
            for (int at = 0; at < length; at++)
            {
                key[at] = 1;
                Assert.NotEqual(hash, CacheHashing.Hash(key));
                key[at] = 0;
            }
        }
    }
}
