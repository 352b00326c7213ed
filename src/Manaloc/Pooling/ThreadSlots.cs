using System.Runtime.CompilerServices;

namespace Manaloc.Pooling;

/// <summary>
/// Per-thread slots for per-pool state: one thread-static array indexed by a small per-pool id, so a
/// pool finds the calling thread's stack with one thread-static read, a bounds check and a token compare
/// (cheaper than <see cref="ThreadLocal{T}"/>, and it scales to many pool instances).
/// </summary>
/// <remarks>
/// Ids are reused once a pool releases its lease (Dispose, or the pool was collected); a reused id may
/// still find a stale entry of the old pool on some thread, which is why entries carry a token that is
/// never reused. Stale entries are overwritten when the new owner of the id first runs on that thread.
/// Memory ordering: the id free list is guarded by a lock; the thread-static array is only ever touched
/// by its own thread. Thread safety: safe from any thread.
/// </remarks>
internal static class ThreadSlots
{
    [ThreadStatic]
    private static ThreadSlotEntry?[]? t_entries;

    /// <summary>
    /// The entry of the object pool this thread used last (set by the pools' slow paths, never for a
    /// debug-mode pool): the pools' fast paths check only its token, one thread-static load and a compare.
    /// Only its own thread reads or writes it.
    /// </summary>
    [ThreadStatic]
    internal static ThreadSlotEntry? t_lastPool;

    private static readonly Lock s_lock = new();
    private static readonly Stack<int> s_free = new();
    private static int s_next;
    private static long s_lastToken;

    /// <summary>The calling thread's entry at <paramref name="id"/> if it belongs to <paramref name="token"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ThreadSlotEntry? Get(int id, long token)
    {
        var entries = t_entries;
        if (entries is not null && (uint)id < (uint)entries.Length)
        {
            var entry = entries[id];
            if (entry is not null && entry.Token == token) return entry;
        }
        return null;
    }

    /// <summary>Stores the calling thread's entry at <paramref name="id"/>, growing its array.</summary>
    public static void Set(int id, ThreadSlotEntry entry)
    {
        var entries = t_entries;
        if (entries is null || id >= entries.Length)
        {
            Array.Resize(ref entries, Math.Max(8, (int)Math.Min(int.MaxValue, System.Numerics.BitOperations.RoundUpToPowerOf2((uint)id + 1))));
            t_entries = entries;
        }
        entries[id] = entry;
    }

    /// <summary>Takes a free id and a fresh token.</summary>
    public static SlotLease Lease()
    {
        long token = Interlocked.Increment(ref s_lastToken); // unique across the process; orders nothing else
        lock (s_lock)
        {
            int id = s_free.Count > 0 ? s_free.Pop() : s_next++;
            return new SlotLease(id, token);
        }
    }

    /// <summary>Gives an id back for reuse.</summary>
    internal static void Free(int id)
    {
        lock (s_lock)
        {
            s_free.Push(id);
        }
    }
}
