using System.Runtime.CompilerServices;

namespace Manaloc.Collections;

/// <summary>
/// The maps' hashing: a 64-bit hash per key, mixed so that every bit depends on every bit of the key.
/// </summary>
/// <remarks>
/// Why mix: the table addresses a bucket by the hash's low bits and compares a tag made of its top seven
/// bits, so both ends must be well spread. <c>long.GetHashCode</c> folds the two halves (sequential keys
/// give sequential hashes) and <c>Guid.GetHashCode</c> xors four ints; the default here hashes the key's
/// own bits instead for the types whose equality is bitwise (the integers, <see cref="Guid"/>, <see cref="char"/>),
/// and <see cref="IEquatable{T}"/>'s <c>GetHashCode</c> for every other type (a float's or a custom struct's
/// equality is not its bits), then finishes with <see cref="Spread"/> (one multiply). The type tests are on a
/// generic value type, so the JIT keeps only the one branch that applies. A caller's hasher is finished the same
/// way, so an identity hasher is fine.
/// Why one multiply and not MurmurHash3's finalizer (two): the hash is the first link of a lookup's chain of
/// dependent steps (hash, bucket, header, entry), and on a hit whose bucket and entry are in cache that chain is the
/// lookup; the finalizer's second multiply and shift added about a third to the hash's latency. The table needs no
/// full avalanche, only low and top bits that depend on every key bit, which <see cref="Spread"/> gives.
/// </remarks>
internal static class MapHashing
{
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ulong Hash<TKey>(TKey key, Func<TKey, ulong>? hasher) where TKey : unmanaged, IEquatable<TKey>
        => Spread(hasher is null ? Bits(key) : hasher(key));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ulong Bits<TKey>(TKey key) where TKey : unmanaged, IEquatable<TKey>
    {
        if (typeof(TKey) == typeof(long) || typeof(TKey) == typeof(ulong) || typeof(TKey) == typeof(nint) || typeof(TKey) == typeof(nuint))
        {
            return Unsafe.As<TKey, ulong>(ref key);
        }
        if (typeof(TKey) == typeof(int) || typeof(TKey) == typeof(uint)) return Unsafe.As<TKey, uint>(ref key);
        if (typeof(TKey) == typeof(short) || typeof(TKey) == typeof(ushort) || typeof(TKey) == typeof(char)) return Unsafe.As<TKey, ushort>(ref key);
        if (typeof(TKey) == typeof(byte) || typeof(TKey) == typeof(sbyte)) return Unsafe.As<TKey, byte>(ref key);
        if (typeof(TKey) == typeof(Guid))
        {
            ref ulong half = ref Unsafe.As<TKey, ulong>(ref key);
            // Mix one half before folding the other in: a plain xor would map (a, b) and (b, a) together.
            return Mix(half) ^ Unsafe.Add(ref half, 1);
        }
        return (uint)key.GetHashCode();
    }

    /// <summary>Whether <typeparamref name="TKey"/>'s equality is the runtime's own (the integers, <see cref="char"/>,
    /// <see cref="Guid"/>): it runs no user code and cannot throw. A constant for the JIT.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static bool HasRuntimeEquality<TKey>()
        => typeof(TKey) == typeof(long) || typeof(TKey) == typeof(ulong) || typeof(TKey) == typeof(nint) || typeof(TKey) == typeof(nuint)
        || typeof(TKey) == typeof(int) || typeof(TKey) == typeof(uint) || typeof(TKey) == typeof(short) || typeof(TKey) == typeof(ushort)
        || typeof(TKey) == typeof(char) || typeof(TKey) == typeof(byte) || typeof(TKey) == typeof(sbyte) || typeof(TKey) == typeof(Guid);

    /// <summary>
    /// The maps' finish: a bijection on 64 bits (each step is invertible) whose low bits (the bucket) and top bits (the tag)
    /// depend on every bit of <paramref name="h"/>. The fold first brings the high half into the low one (keys that differ
    /// only above bit 32, such as ids shifted left, would otherwise differ only in the product's high bits), the odd
    /// multiply carries every low bit up to the top, and the last fold brings the product's well-mixed high half back
    /// down to the low bits. Sequential keys land in distinct buckets with distinct tags.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ulong Spread(ulong h)
    {
        h ^= h >> 32;
        h *= 0x9E3779B97F4A7C15UL;
        return h ^ (h >> 32);
    }

    /// <summary>MurmurHash3's fmix64: a bijection on 64 bits with full avalanche.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ulong Mix(ulong h)
    {
        h ^= h >> 33;
        h *= 0xFF51AFD7ED558CCDUL;
        h ^= h >> 33;
        h *= 0xC4CEB9FE1A85EC53UL;
        h ^= h >> 33;
        return h;
    }
}
