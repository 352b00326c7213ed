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

    /// <summary>One char of each class the ASCII path must tell apart: ASCII at both ends, just above ASCII, the last byte
    /// value (x64's saturating pack keeps it), above a byte (a truncating narrowing would make it 0x00), lone surrogates.</summary>
    private static readonly char[] s_nonAscii = ['\u0080', '\u00FF', '\u0100', '\u0178', '\u4E2D', '\uD800', '\uDFFF', '\uFFFF'];

    [Fact]
    public void The_ascii_path_gives_the_general_paths_bytes_and_hash_or_declines_for_every_class_and_length_0_to_300()
    {
        var random = new Random(330);
        var chars = new char[320];
        var buffer = new byte[256];
        var general = new byte[3 * 320];
        int taken = 0;
        for (int length = 0; length <= 300; length++)
        {
            for (int variant = 0; variant <= s_nonAscii.Length; variant++)
            {
                int offset = random.Next(8); // any alignment of the chars
                var key = chars.AsSpan(offset, length);
                for (int i = 0; i < length; i++) key[i] = (char)random.Next(0, 0x80);
                if (length > 0 && random.Next(4) == 0) key[random.Next(length)] = '\u007F';
                bool ascii = variant == s_nonAscii.Length || length == 0;
                // A char of the class at a random place, also in the last 8 (read by the tail's overlapping load only).
                if (!ascii) key[random.Next(2) == 0 ? random.Next(length) : Math.Max(0, length - 1 - random.Next(Math.Min(8, length)))] = s_nonAscii[variant];
                buffer.AsSpan().Fill(0xCC);

                bool fast = CacheHashing.TryNarrowAsciiAndHash(key, buffer, out ulong hash);

                using var utf8 = new Utf8Key(key, general);
                var expected = utf8.Bytes;
                int written = expected.Length;
                Assert.Equal(ascii && length >= 8 && length <= buffer.Length, fast);
                if (!fast) continue;
                taken++;
                Assert.Equal(length, written);
                Assert.True(expected.SequenceEqual(buffer.AsSpan(0, length)), $"bytes of an ASCII key of {length} chars");
                Assert.Equal(CacheHashing.Hash(expected), hash);
                Assert.Equal(Reference(expected), hash);
            }
        }
        Assert.Equal(256 - 8 + 1, taken); // every ASCII length it serves was checked
    }

    [Fact]
    public void The_ascii_path_declines_a_key_longer_than_its_buffer_and_writes_nothing_past_it()
    {
        var key = new string('a', 40);
        var buffer = new byte[48];
        Assert.False(CacheHashing.TryNarrowAsciiAndHash(key, buffer.AsSpan(0, 39), out _));
        Assert.All(buffer, b => Assert.Equal(0, b));
        Assert.True(CacheHashing.TryNarrowAsciiAndHash(key, buffer.AsSpan(0, 40), out ulong hash));
        Assert.Equal(CacheHashing.Hash(buffer.AsSpan(0, 40)), hash);
        Assert.All(buffer.AsSpan(40).ToArray(), b => Assert.Equal(0, b));
    }
}
