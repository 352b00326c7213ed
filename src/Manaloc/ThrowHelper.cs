using System.Diagnostics.CodeAnalysis;

namespace Manaloc;

/// <summary>
/// Throwing lives here so hot paths that check stay small enough to inline. The generic throws
/// (argument, range, null, state, disposed) are here for every area; an area's own helper
/// (MemoryThrowHelper, PoolThrowHelper, EventThrowHelper, DispatcherThrowHelper) holds only the
/// throws whose messages belong to that area.
/// </summary>
internal static class ThrowHelper
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
}
