namespace Manaloc.Buffers;

public sealed partial class BufferMemoryPool
{
    /// <summary>
    /// Gives the idle blocks back now: every size class's idle owners, the shared ones and those on quiet threads'
    /// stacks (their arrays go back to the manager), then, when the pool created its manager, the manager's idle buffers.
    /// </summary>
    /// <remarks>
    /// Why: the pool releases idle owners on its own timer (<see cref="Pooling.PoolOptions.ReleaseIdleAfter"/>), and a
    /// service that knows it has gone quiet (see Manaloc.AspNetCore's idle release) can give them back at once, so that
    /// one collection afterwards finds them garbage. A stack whose thread is renting at this moment keeps its owners.
    /// A manager given to the pool (<see cref="BufferMemoryPoolOptions.Manager"/>) is left to its owner. Renting after a
    /// trim works as before (new owners and arrays). Thread safety: safe from any thread, beside rents and returns;
    /// after the pool is disposed it does nothing.
    /// </remarks>
    public void Trim()
    {
        if (Volatile.Read(ref _disposed) != 0) return;
        for (int i = 0; i < _classes.Length; i++)
        {
            Volatile.Read(ref _classes[i])?.Owners.ReleaseAllIdle(); // acquire: pairs with the lock that published the class
        }
        if (_ownsManager) _manager.Trim();
    }
}
