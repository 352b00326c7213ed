using System.Diagnostics.CodeAnalysis;

namespace Manaloc;

/// <summary>Throwing for the Collections area lives here, so the maps' lookups and inserts stay small enough to inline.</summary>
internal static partial class ThrowHelper
{
    [DoesNotReturn]
    public static void ThrowKeyNotFound<TKey>(TKey key)
        => throw new KeyNotFoundException($"The given key '{key}' was not present in the dictionary.");

    [DoesNotReturn]
    public static void ThrowEnumerationChanged()
        => throw new InvalidOperationException("Collection was modified; enumeration operation may not execute.");

    [DoesNotReturn]
    public static void ThrowEnumerationNotOnAnEntry()
        => throw new InvalidOperationException("Enumeration has either not started or has already finished.");

    [DoesNotReturn]
    public static void ThrowMapOutOfMemory(string map, long bytes)
        => throw new OutOfMemoryException($"{map}: the native allocation of {Plural.Of(bytes, "byte")} failed; the map is unchanged.");

    [DoesNotReturn]
    public static void ThrowMapCapacityTooLarge(string map, long initialCapacity, long tableBytes, long availableBytes)
        => throw new OutOfMemoryException(
            $"{map}: an InitialCapacity of {initialCapacity} entries needs a table of {Plural.Of(tableBytes, "byte")}, more than the "
            + $"{Plural.Of(availableBytes, "byte")} of memory this process may use; nothing was allocated. Give a capacity the process can hold (the map grows one bucket at a time past it).");

    [DoesNotReturn]
    public static void ThrowMapFull(string map)
        => throw new InvalidOperationException($"{map} holds {int.MaxValue} entries, the most a map holds (its Count is an int).");

    [DoesNotReturn]
    public static void ThrowEntryTooLarge(string map, int keyBytes, int valueBytes, int limit)
        => throw new NotSupportedException(
            $"{map}: an entry is the key's {keyBytes} bytes plus the value's {valueBytes} bytes, {keyBytes + valueBytes} in all, above the limit of {limit} bytes "
            + "(a bucket holds 14 entries inline). Keep large values elsewhere (a RecordArray, a NativeRecord handle, an index into an array) and store the reference in the map.");
}
