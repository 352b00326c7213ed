using System.Diagnostics.CodeAnalysis;

namespace Manaloc;

/// <summary>
/// Throwing for the events, the lazy async result, the reusable value-task source and the slim
/// reader-writer lock, so their fast paths stay small enough to inline.
/// </summary>
internal static partial class ThrowHelper
{
    [DoesNotReturn]
    public static void ThrowObjectDisposed(object instance)
        => throw new ObjectDisposedException(instance.GetType().Name);

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
