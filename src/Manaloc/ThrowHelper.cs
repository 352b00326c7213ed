using System.Diagnostics.CodeAnalysis;

namespace Manaloc;

/// <summary>Throwing lives here so hot paths that check stay small enough to inline.</summary>
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
