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

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ulong Hash(ReadOnlySpan<byte> key)
    {
        const ulong K = 0x9E3779B97F4A7C15UL;
        ulong h = s_seed ^ ((ulong)key.Length * K);
        while (key.Length >= 8)
        {
            h = BitOperations.RotateLeft((h ^ BinaryPrimitives.ReadUInt64LittleEndian(key)) * K, 29);
            key = key[8..];
        }
        if (key.Length > 0)
        {
            ulong tail = 0;
            for (int i = 0; i < key.Length; i++) tail |= (ulong)key[i] << (8 * i);
            h = BitOperations.RotateLeft((h ^ tail) * K, 29);
        }
        return MapHashing.Mix(h);
    }
}
