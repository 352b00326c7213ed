namespace Manaloc.Pooling;

/// <summary>What a pool does with an object it will not keep.</summary>
internal static class PoolDrop
{
    /// <summary>Disposes <paramref name="item"/> if it is disposable; otherwise leaves it to the GC.</summary>
    public static void Drop(object? item)
    {
        if (item is IDisposable disposable) disposable.Dispose();
    }

    /// <summary>Drops items without letting a failing Dispose escape (for trims on the finalizer thread).</summary>
    public static void DropQuietly(object? item)
    {
        try
        {
            Drop(item);
        }
        catch (Exception) // a trim on the finalizer thread must not take the process down
        {
        }
    }

    /// <summary>
    /// Drops every item even when some Dispose throws; then rethrows the failure: the exception itself
    /// when one item failed, an <see cref="AggregateException"/> of all of them when several did.
    /// </summary>
    public static void DropAll<T>(IEnumerable<T> items)
    {
        List<Exception>? failures = null;
        foreach (var item in items)
        {
            try
            {
                Drop(item);
            }
            catch (Exception e) // keep dropping the rest; reported below
            {
                (failures ??= []).Add(e);
            }
        }
        if (failures is null) return;
        if (failures.Count == 1) System.Runtime.ExceptionServices.ExceptionDispatchInfo.Throw(failures[0]);
        throw new AggregateException("Disposing several dropped pool objects failed.", failures);
    }
}

