namespace Manaloc.Collections;

/// <summary>Settings of a <see cref="NativeMap{TKey, TValue}"/> or a <see cref="ConcurrentNativeMap{TKey, TValue}"/>.</summary>
/// <typeparam name="TKey">The map's key type.</typeparam>
/// <remarks>Read once by the map's constructor, which validates them; changing the options afterwards changes
/// nothing. Not thread-safe (a plain settings object).</remarks>
public sealed class NativeMapOptions<TKey> where TKey : unmanaged, IEquatable<TKey>
{
    /// <summary>Entries the map holds before its first split (0 by default: the map starts with one bucket).</summary>
    /// <remarks>Growth is one bucket at a time and never copies the table, so a capacity is an optimisation (it saves
    /// the splits on the way), not the way to avoid a pause. The table for it is allocated and written at construction:
    /// negative values are refused, and a capacity whose table is larger than the memory the process may use throws
    /// <see cref="OutOfMemoryException"/> before anything is allocated.</remarks>
    public int InitialCapacity { get; set; }

    /// <summary>The name used in exceptions, <c>ToString</c>, the leak report and the meters' <c>name</c> tag (<c>native-map</c> by default).</summary>
    public string? Name { get; set; }

    /// <summary>A hash of a key; null (the default) hashes the key's bits for the integer types, <see cref="char"/> and
    /// <see cref="Guid"/>, and <see cref="object.GetHashCode"/> for any other key type.</summary>
    /// <remarks>Keys equal by <see cref="IEquatable{T}.Equals(T)"/> must hash the same. The map mixes the result (a
    /// fold, one odd multiply and a fold: a bijection whose bucket and tag bits depend on every bit), so even the
    /// identity spreads sequential keys. It
    /// is called on the calling thread, also inside the concurrent map's enumeration and in an insert's split of another
    /// key's bucket; if it throws, the call that ran it throws and the map's entries are unchanged.</remarks>
    public Func<TKey, ulong>? Hasher { get; set; }
}
