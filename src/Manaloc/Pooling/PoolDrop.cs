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
}
