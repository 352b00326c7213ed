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

    /// <summary>A pool or buffer manager used after Dispose.</summary>
    [DoesNotReturn]
    public static void ThrowPoolDisposed(string poolName) => throw new ObjectDisposedException(poolName, $"The pool '{poolName}' was disposed.");

    [DoesNotReturn]
    public static void ThrowDoubleReturn(string poolName, string typeName)
        => throw new InvalidOperationException($"Double return to pool '{poolName}': this {typeName} was already returned and not rented since.");

    [DoesNotReturn]
    public static void ThrowForeignReturn(string poolName, string typeName)
        => throw new InvalidOperationException($"Foreign return to pool '{poolName}': this {typeName} was never handed out by this pool.");
}
