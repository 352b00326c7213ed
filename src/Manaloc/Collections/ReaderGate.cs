using System.Runtime.CompilerServices;

namespace Manaloc.Collections;

/// <summary>
/// Memory reclamation for lock-free readers: a reader marks itself inside a read on a slot of its own thread, and
/// whoever frees memory readers may still hold first unpublishes it, then waits until every reader that was inside has
/// left. Used by <see cref="NativeCache"/> (its store, and chunks freed on eviction) and by
/// <see cref="ConcurrentNativeMap{TKey, TValue}"/> only where pages cannot be discarded (every system but Linux; on Linux
/// the map's reads take no gate: see <see cref="NativeHashTable{TKey, TValue}.ReleaseUnderReaders"/>).
/// </summary>
/// <remarks>
/// <para>Why this shape: the reader's cost must be a few plain instructions, not an atomic (the lookups are
/// the maps' reason to exist). Entering is a plain store of an odd sequence to a slot only this thread writes;
/// leaving is a release store of the next even one. The rare side pays instead:
/// <see cref="Interlocked.MemoryBarrierProcessWide"/> (membarrier on Linux, FlushProcessWriteBuffers on
/// Windows: every processor executes a full barrier) and a scan of the slots.</para>
/// <para>Memory-ordering argument (asymmetric Dekker). Reader: (1) slot := odd; (2) read the map's table
/// reference; use it; (3) slot := even (release). Reclaimer: (a) store the new table reference (or null);
/// (b) process-wide barrier; (c) read every slot; wait for each odd one to change. The barrier at (b) makes every
/// processor serialise at some point after (a): a reader whose (1) came before that point has its odd store
/// visible to (c), so the reclaimer waits for its (3), which releases every read of the old table; a reader
/// whose (1) came after it runs (2) after the processor's barrier, so it reads the store of (a) and never sees
/// the old table. Either way no reader touches memory after it is freed. The JIT does not move memory accesses
/// across a volatile access, and (2) is one (<see cref="Volatile.Read{T}(ref readonly T)"/>), so the plain
/// store (1) stays before it in the code as well.</para>
/// <para>Why a thread-static slot: it is the cheapest thread identity there is (a call into the runtime's thread-local
/// block and three dependent loads, all in the first-level cache). A thread-static holding no GC reference (a pointer
/// to a native slot) would not save the call: on linux-x64 every thread-static, <see cref="Thread.CurrentThread"/>
/// included, compiles to the same call to the TLS resolver and the same loads, so the slot stays an object. Slots
/// striped by <see cref="Thread.GetCurrentProcessorId"/> would not save it (on Linux that reads a thread-static cache
/// too) and would cost more: a thread can move to another processor between Enter and Exit, so two threads can share a
/// stripe, and a shared stripe needs interlocked increments, whose full fence waits for the loads of the lookups before
/// it (each a cache miss) and so takes away the overlap of consecutive lookups that is their throughput. The two marker stores are plain read-modify-writes, no
/// lock prefix.</para>
/// <para>Reads nest: a read entered inside another (user code run inside a read reading a map or cache) only counts its
/// depth, and the outermost read's exit ends it. That count costs about 1.7 ns per read (a loop of enter, one random
/// load, exit: 2.8 ns without it, 4.5 ns with it, on the machine the lab ran on), against a cache hit's hundreds.</para>
/// <para>The cost: per read a thread-static load, two stores to a line only this thread writes and the depth's count; per
/// reclamation one process-wide barrier (microseconds) and a wait as long as the longest read in progress
/// (a read holds no lock and never blocks, so that is a bucket's length). Slots are per thread and shared by
/// every map, so a reclaimer may wait for a reader of another map: also only for one read.</para>
/// </remarks>
internal static class ReaderGate
{
    /// <summary>One thread's read marker, alone on its cache line.</summary>
    internal sealed class Slot
    {
        /// <summary>Odd while the thread is inside a read; written only by its thread (padded: no other line shares it).</summary>
        public Threading.Padded<long> Sequence;

        /// <summary>The thread's tally of the cache it read last (see <see cref="ReadTallies"/>); only its thread reads or writes it.</summary>
        public ReadTally? Tally;

        /// <summary>How many reads the thread is inside: more than one when user code run inside a read (a
        /// <see cref="TimeProvider"/>, a key's <c>Equals</c>) reads a map or cache itself. Only the outermost read's enter and
        /// exit change <see cref="Sequence"/>: were the inner one to make it even, a reclaimer would take the thread for
        /// gone and free what the outer read still holds. Only its thread reads or writes it.</summary>
        public int Depth;
    }

    [ThreadStatic]
    private static Slot? t_slot;

    private static readonly object s_lock = new();
    // Weak: a slot of an exited thread becomes garbage (its thread's static was its only strong reference).
    private static readonly List<WeakReference<Slot>> s_slots = [];
    // The slots WaitForReaders scans, rebuilt after a registration (null until then); under s_lock.
    private static Slot[]? s_snapshot;

    /// <summary>Marks the calling thread inside a read; pass the slot to <see cref="Exit"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Slot Enter()
    {
        Slot slot = t_slot ?? Register();
        // Plain store: only this thread writes the slot; the reclaimer's process-wide barrier makes it visible (see remarks).
        if (slot.Depth++ == 0) slot.Sequence.Value++;
        return slot;
    }

    /// <summary>Marks the calling thread outside its read.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void Exit(Slot slot)
    {
        // Release: every read of the table in this read happens before the reclaimer can see the even value and free it.
        if (--slot.Depth == 0) Volatile.Write(ref slot.Sequence.Value, slot.Sequence.Value + 1);
    }

    /// <summary>Waits until every read that may have seen a table unpublished before this call has ended.</summary>
    /// <remarks>Call after the table reference was replaced; never from inside a read (it would wait for itself).</remarks>
    public static void WaitForReaders()
    {
        Interlocked.MemoryBarrierProcessWide();
        Slot[] slots;
        lock (s_lock)
        {
            // The snapshot is rebuilt only when a thread registered since the last one, so a steady-state reclaimer (the
            // native cache reclaims in batches while it evicts) allocates nothing. A slot it still holds of a thread that
            // has exited reads even: skipped.
            if (s_snapshot is null)
            {
                s_slots.RemoveAll(w => !w.TryGetTarget(out _));
                var live = new List<Slot>(s_slots.Count);
                foreach (var w in s_slots)
                {
                    if (w.TryGetTarget(out var s)) live.Add(s);
                }
                s_snapshot = [.. live];
            }
            slots = s_snapshot;
        }
        foreach (var slot in slots)
        {
            // Acquire: pairs with Exit's release, so the reader's reads of the old table are done before we go on to free it.
            long seen = Volatile.Read(ref slot.Sequence.Value);
            if ((seen & 1) == 0) continue;
            var spin = new SpinWait();
            while (Volatile.Read(ref slot.Sequence.Value) == seen) spin.SpinOnce();
        }
    }

    /// <summary>Under <paramref name="writeLock"/>, publishes what <paramref name="next"/> makes of the current structure
    /// in its place (null: unpublishes it for good), then waits until no reader may still hold the old one; returns the
    /// old one for the caller to free, or null if none was published (nothing done).</summary>
    /// <remarks>Clear and Dispose of a structure read through <see cref="Enter"/>; never from inside a read. If
    /// <paramref name="next"/> throws, the current structure stays published.</remarks>
    public static T? Replace<T>(ref T? published, object writeLock, Func<T, T?> next) where T : class
    {
        T? old;
        lock (writeLock)
        {
            old = published;
            if (old is null) return null;
            // Release, step (a) of the argument in the remarks: the replacement's initialised memory before a reader can
            // load the reference, and the store before WaitForReaders' barrier.
            Volatile.Write(ref published, next(old));
        }
        WaitForReaders();
        return old;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static Slot Register()
    {
        var slot = new Slot();
        lock (s_lock)
        {
            s_slots.RemoveAll(w => !w.TryGetTarget(out _));
            s_slots.Add(new WeakReference<Slot>(slot));
            s_snapshot = null;
        }
        t_slot = slot;
        return slot;
    }
}
