using System.Diagnostics.CodeAnalysis;

namespace Manaloc.Pooling;

/// <summary>Throwing for the pooling and buffer areas, so rent/return stay small enough to inline.</summary>
internal static class PoolThrowHelper
{

    [DoesNotReturn]
    public static void ThrowObjectDisposed(string poolName) => throw new ObjectDisposedException(poolName, $"The pool '{poolName}' was disposed.");

    [DoesNotReturn]
    public static void ThrowDoubleReturn(string poolName, string typeName)
        => throw new InvalidOperationException($"Double return to pool '{poolName}': this {typeName} was already returned and not rented since.");

    [DoesNotReturn]
    public static void ThrowForeignReturn(string poolName, string typeName)
        => throw new InvalidOperationException($"Foreign return to pool '{poolName}': this {typeName} was never handed out by this pool.");
}
