using System.Diagnostics.CodeAnalysis;

namespace Manaloc;

/// <summary>Throwing for <see cref="Threading.DedicatedThreadDispatcher"/>, kept out of the posting paths so they inline.</summary>
internal static partial class ThrowHelper
{
    [DoesNotReturn]
    public static void ThrowShuttingDown(string name)
        => throw new InvalidOperationException($"Dispatcher '{name}' is shut down or shutting down and accepts no more items; the item was not queued.");

    [DoesNotReturn]
    public static void ThrowFull(string name, int capacity)
        => throw new InvalidOperationException($"Dispatcher '{name}' has a full queue ({Plural.Of(capacity, "item")}) and fails fast; the item was not queued. Use TryPost to test for room.");

    [DoesNotReturn]
    public static void ThrowFullFromWorker(string name, int capacity)
        => throw new InvalidOperationException($"Dispatcher '{name}' has a full queue ({Plural.Of(capacity, "item")}) and Post was called on one of its own workers: blocking there could deadlock, since only the workers make room. The item was not queued; use TryPost or PostAsync from a work item.");

    [DoesNotReturn]
    public static void ThrowShutdownFromWorker(string name)
        => throw new InvalidOperationException($"Dispatcher '{name}' cannot be shut down from one of its own worker threads: the shutdown would wait for the item that called it.");

    [DoesNotReturn]
    public static void ThrowBadTimeout(string paramName, TimeSpan timeout)
        => throw new ArgumentOutOfRangeException(paramName, timeout, "A shutdown timeout is zero or more, or Timeout.InfiniteTimeSpan.");

    public static Exception ShuttingDown(string name)
        => new InvalidOperationException($"Dispatcher '{name}' is shut down or shutting down and accepts no more items; the item was not queued.");

    public static Exception Full(string name, int capacity)
        => new InvalidOperationException($"Dispatcher '{name}' has a full queue ({Plural.Of(capacity, "item")}) and fails fast; the item was not queued. Use TryPost to test for room.");
}
