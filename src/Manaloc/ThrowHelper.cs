using System.Diagnostics.CodeAnalysis;

namespace Manaloc;

/// <summary>
/// The library's one throw helper: throwing lives here so hot paths that check stay small enough to inline.
/// This file holds the generic throws (argument, range, null, state, disposed) and the pooling and buffer
/// areas' own; each other area's messages sit beside its code in a part of this class
/// (<c>Memory/ThrowHelper.Memory.cs</c>, <c>Threading/ThrowHelper.Events.cs</c>, <c>Threading/ThrowHelper.Dispatcher.cs</c>).
/// </summary>
internal static partial class ThrowHelper
{
    [DoesNotReturn]
    public static void ThrowArgumentOutOfRange(string paramName, object? actualValue, string message)
        => throw new ArgumentOutOfRangeException(paramName, actualValue, message);

    [DoesNotReturn]
    public static void ThrowArgument(string paramName, string message)
        => throw new ArgumentException(message, paramName);

    [DoesNotReturn]
    public static void ThrowArgumentNull(string paramName)
        => throw new ArgumentNullException(paramName);

    [DoesNotReturn]
    public static void ThrowInvalidOperation(string message)
        => throw new InvalidOperationException(message);

    [DoesNotReturn]
    public static void ThrowObjectDisposed(string objectName)
        => throw new ObjectDisposedException(objectName);

    /// <summary>A <see cref="Buffers.PooledBufferWriter"/> or <see cref="Buffers.PooledBufferStream"/> used after Dispose, naming its manager.</summary>
    [DoesNotReturn]
    public static void ThrowSegmentsDisposed(string component, string manager)
        => throw new ObjectDisposedException(component, $"This {component} (over BufferManager '{manager}') was disposed: its segments went back to the manager.");

    /// <summary>A pool or buffer manager used after Dispose; <paramref name="component"/> is its kind (<c>SemiLocalPool&lt;Order&gt;</c>).</summary>
    [DoesNotReturn]
    public static void ThrowPoolDisposed(string component, string name)
        => throw new ObjectDisposedException(component, $"{component} '{name}' was disposed, so it hands out nothing any more.");

    /// <summary>A <see cref="Buffers.RentedBuffer"/> used after Dispose (<paramref name="manager"/> is null for <c>default</c>).</summary>
    [DoesNotReturn]
    public static void ThrowBufferDisposed(string? manager, int length)
        => throw new ObjectDisposedException(nameof(Buffers.RentedBuffer), manager is null
            ? "This RentedBuffer is default: it holds no buffer (rent one with BufferManager.RentBuffer)."
            : $"This RentedBuffer ({length} bytes from BufferManager '{manager}') was disposed: its array went back to the manager and may be another renter's now.");

    /// <summary>
    /// The second return of one rent; <paramref name="pool"/> names the pool as <c>SemiLocalPool&lt;Order&gt; 'orders'</c>
    /// and <paramref name="typeName"/> the object's type.
    /// </summary>
    [DoesNotReturn]
    public static void ThrowDoubleReturn(string pool, string typeName)
        => throw new InvalidOperationException($"Double return to {pool}: this {typeName} was returned twice (it was already returned and not rented since). Keeping it twice would hand it to two renters; return each rented object once.");

    [DoesNotReturn]
    public static void ThrowForeignReturn(string pool, string typeName)
        => throw new InvalidOperationException($"Foreign return to {pool}: this {typeName} was never handed out by this pool.");
}
