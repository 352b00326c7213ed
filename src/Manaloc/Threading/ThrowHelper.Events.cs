using System.Diagnostics.CodeAnalysis;

namespace Manaloc;

/// <summary>
/// Throwing for the events, the lazy async result, the reusable value-task source and the slim
/// reader-writer lock, so their fast paths stay small enough to inline.
/// </summary>
internal static partial class ThrowHelper
{
    /// <summary>Throws for a disposed component without a name: the exception names its type as a user writes it (<c>LazyAsyncResult</c>, not <c>LazyAsyncResult`1</c>).</summary>
    [DoesNotReturn]
    public static void ThrowObjectDisposed(object instance)
    {
        string type = instance.GetType().Name;
        int arity = type.IndexOf('`', StringComparison.Ordinal);
        if (arity >= 0) type = type[..arity];
        throw new ObjectDisposedException(type, $"This {type} has been disposed and can no longer be used.");
    }

    [DoesNotReturn]
    public static void ThrowConcurrentWaiter()
        => throw new InvalidOperationException(
            "Another thread is already waiting on this EconomicResetEvent: it supports one waiter at a time (many setters).");

    [DoesNotReturn]
    public static void ThrowSpinCount(int spinCount)
        => throw new ArgumentOutOfRangeException(nameof(spinCount), spinCount, "The spin count must be between 0 and 2047.");

    [DoesNotReturn]
    public static void ThrowTimeout(TimeSpan timeout)
        => throw new ArgumentOutOfRangeException(nameof(timeout), timeout, "The timeout must be Timeout.InfiniteTimeSpan or between 0 and int.MaxValue milliseconds.");

    [DoesNotReturn]
    public static void ThrowAlreadyCompleted()
        => throw new InvalidOperationException("The asynchronous operation has already been completed; it can complete only once.");

    [DoesNotReturn]
    public static void ThrowRecursion(string message)
        => throw new LockRecursionException(message);

    [DoesNotReturn]
    public static void ThrowNotHeld(string message)
        => throw new SynchronizationLockException(message);

}
