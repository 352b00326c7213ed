using System.Runtime.CompilerServices;
using Manaloc.Threading;

namespace Manaloc.Collections;

/// <summary>
/// A cache's hit and miss counts, kept as one tally per thread, and each thread's stripe of the policy's read buffer.
/// </summary>
/// <remarks>
/// <para>Why: a shared counter, or one striped by processor (a thread can move between processors, so two threads can
/// share a stripe), needs an interlocked add per read, and a locked add is a full fence: on x64 the next read's loads
/// (its bucket and entry, each a likely cache miss) cannot start under it, which takes away the overlap of consecutive
/// reads. A tally only its own thread writes takes a plain increment and stays exact. The stripe is dealt round-robin
/// as threads first read the cache (so the threads that read it spread over the stripes), not picked from the processor
/// on every read (a call per read).</para>
/// <para>Ordering: a tally's counts are written only by its thread (<see cref="Volatile.Write(ref long, long)"/>: one
/// atomic store, also on 32-bit, plain on x64) and read by <see cref="Hits"/> and <see cref="Misses"/> with
/// <see cref="Volatile.Read(ref readonly long)"/>; a sum taken while reads run sees each tally at some recent value of
/// its own, and is exact once they stop. Tallies are keyed by managed thread id, which the runtime reuses only after
/// the thread has exited, so a tally has at most one live writer (a reused one keeps its dead writer's counts: nothing
/// counted is lost). The array of tallies is replaced whole under the lock (a tally is written before the release
/// store that publishes it) and read without it.</para>
/// <para>Lookup: a thread finds its tally of the cache it read last through its <see cref="ReaderGate"/> slot (a field
/// compare); a thread reading another cache looks it up lock-free in the array indexed by its id; a tally is made
/// under the lock once per thread id. The slot holds the tally, whose owner is this object, not the cache: a thread
/// keeps no cache alive.</para>
/// </remarks>
internal sealed class ReadTallies
{
    private readonly object _lock = new();
    private ReadTally?[] _byThread = new ReadTally?[16];
    private int _nextStripe; // under _lock

    /// <summary>The calling thread's tally; <paramref name="slot"/> is the thread's own (from <see cref="ReaderGate.Enter"/>).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public ReadTally For(ReaderGate.Slot slot)
    {
        var tally = slot.Tally;
        return tally is not null && ReferenceEquals(tally.Owner, this) ? tally : Find(slot);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private ReadTally Find(ReaderGate.Slot slot)
    {
        int id = Environment.CurrentManagedThreadId;
        var byThread = Volatile.Read(ref _byThread);
        var tally = (uint)id < (uint)byThread.Length ? Volatile.Read(ref byThread[id]) : null;
        tally ??= Create(id);
        slot.Tally = tally;
        return tally;
    }

    private ReadTally Create(int id)
    {
        lock (_lock)
        {
            var byThread = _byThread;
            if (id < byThread.Length && byThread[id] is { } made) return made;
            var next = new ReadTally?[Math.Max(byThread.Length, (int)Math.Min(Array.MaxLength, 2L * id + 2))];
            byThread.CopyTo(next, 0);
            var tally = new ReadTally(this, _nextStripe++);
            next[id] = tally;
            // Release: the tally and the copied entries are written before a reader can load the array.
            Volatile.Write(ref _byThread, next);
            return tally;
        }
    }

    /// <summary>Hits counted so far (see the remarks for a sum taken while reads run).</summary>
    public long Hits => Sum(hits: true);

    /// <summary>Misses counted so far.</summary>
    public long Misses => Sum(hits: false);

    private long Sum(bool hits)
    {
        long sum = 0;
        foreach (var tally in Volatile.Read(ref _byThread))
        {
            if (tally is null) continue;
            ref var counts = ref tally.Counts.Value;
            sum += hits ? Volatile.Read(ref counts.Hits) : Volatile.Read(ref counts.Misses);
        }
        return sum;
    }

    /// <summary>Tallies made (one per thread id that read the cache), for tests.</summary>
    internal int TallyCount => Volatile.Read(ref _byThread).Count(t => t is not null);
}

/// <summary>One thread's reads of one cache (see <see cref="ReadTallies"/>).</summary>
internal sealed class ReadTally(ReadTallies owner, int stripe)
{
    /// <summary>The tallies this one belongs to (the slot's cached tally is checked against it).</summary>
    public readonly ReadTallies Owner = owner;

    /// <summary>The thread's stripe of the read buffer (the store masks it to its stripe count).</summary>
    public readonly int Stripe = stripe;

    /// <summary>Written only by the owning thread; padded: no other thread's tally shares the line.</summary>
    public Padded<ReadCounts> Counts;

    /// <summary>Counts a hit (the owning thread only).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Hit() => Volatile.Write(ref Counts.Value.Hits, Counts.Value.Hits + 1);

    /// <summary>Counts a miss (the owning thread only).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Miss() => Volatile.Write(ref Counts.Value.Misses, Counts.Value.Misses + 1);
}

/// <summary>A thread's hit and miss counts.</summary>
internal struct ReadCounts
{
    public long Hits;
    public long Misses;
}
