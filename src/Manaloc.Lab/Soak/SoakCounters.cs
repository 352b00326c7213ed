namespace Manaloc.Lab.Soak;

/// <summary>What the soak did, counted as it goes (fields, so threads add with Interlocked).</summary>
internal sealed class SoakCounters
{
    public long RecordsCreated, RecordsDeleted, PoolRents, PoolReturns, BufferRents, BufferReturns, Trims;
    public long ReadLocks, WriteLocks, EventHandOffs, DispatcherCycles, ItemsAccepted, ItemsRan, ItemsHandedBack, PostsRefused;

    public string Describe()
        => $"records {Volatile.Read(ref RecordsCreated):N0}  pool {Volatile.Read(ref PoolRents):N0}  buffers {Volatile.Read(ref BufferRents):N0}  " +
           $"locks {Volatile.Read(ref ReadLocks) + Volatile.Read(ref WriteLocks):N0}  hand-offs {Volatile.Read(ref EventHandOffs):N0}  " +
           $"dispatchers {Volatile.Read(ref DispatcherCycles):N0} ({Volatile.Read(ref ItemsAccepted):N0} items)";

    public IEnumerable<(string Name, long Value)> Rows()
    {
        yield return ("records created", RecordsCreated);
        yield return ("records deleted", RecordsDeleted);
        yield return ("pool rents", PoolRents);
        yield return ("pool returns", PoolReturns);
        yield return ("buffer rents", BufferRents);
        yield return ("buffer returns", BufferReturns);
        yield return ("pool and buffer trims", Trims);
        yield return ("read locks", ReadLocks);
        yield return ("write locks", WriteLocks);
        yield return ("event hand-offs", EventHandOffs);
        yield return ("dispatcher cycles (create, feed, shut down)", DispatcherCycles);
        yield return ("items accepted", ItemsAccepted);
        yield return ("items run", ItemsRan);
        yield return ("items handed back at shutdown", ItemsHandedBack);
        yield return ("posts refused (full or shut down)", PostsRefused);
    }
}
