namespace Manaloc.Pooling;

/// <summary>What a pool does with an object it will not keep.</summary>
internal static class PoolDrop
{
    /// <summary>Tells <paramref name="item"/> it was dropped if it asks to know (<see cref="IDroppedByPool"/>), else disposes it if it is disposable; otherwise leaves it to the GC.</summary>
    public static void Drop(object? item)
    {
        if (item is IDroppedByPool dropped) dropped.OnDroppedByPool();
        else if (item is IDisposable disposable) disposable.Dispose();
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

/// <summary>
/// A pooled object whose <see cref="IDisposable.Dispose"/> is its owner's (a rented memory owner's Dispose gives it back to
/// the pool), so a pool that drops it must tell it apart: it calls <see cref="OnDroppedByPool"/> instead.
/// </summary>
internal interface IDroppedByPool
{
    /// <summary>The pool let the object go for good (its cap, a trim, the idle release, the pool's Dispose): release what it holds.</summary>
    void OnDroppedByPool();
}
