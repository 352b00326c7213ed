using System.Runtime.CompilerServices;

namespace Manaloc.Memory;

/// <summary>
/// A small number per live thread (1, 2, 3, …), for tables indexed by thread: a record array's per-thread views. Unlike the
/// thread's key (<see cref="HeapThreadCheck.CurrentKey"/>, never reused), an index goes back to a free list once its thread
/// has exited, and the lowest free one is handed out next, so a table indexed by it grows with the threads alive at once
/// (and those exited since the last garbage collection, whose finalizers give the indexes back), never with every thread
/// that ever lived.
/// </summary>
/// <remarks>
/// <para>Reading it is one [ThreadStatic] <see langword="int"/> load (<see cref="ThreadKeys.Index"/>, beside the thread's key;
/// 0 until the thread's first <see cref="Acquire"/>, which no table uses). A thread learns it has exited through a finalizer: the thread's <see cref="Lease"/> is referenced only by
/// the thread's own thread-static, so it becomes unreachable when the thread exits, never before, and its finalizer gives
/// the index back.</para>
/// <para>A reused index is not an identity: a table entry left by an exited thread is found by the next thread given its
/// index, so an entry carries the key of the thread that owns it and the new thread checks it (a record array's views do:
/// <see cref="RecordArray{T}"/>).</para>
/// <para>Memory ordering: the free list is guarded by <see cref="s_lock"/>. An index freed by the finalizer was last used by
/// a thread that has exited; the garbage collection that found its lease unreachable ran after that (it suspends the
/// process: a full fence), and the finalizer's push and the next thread's pop are ordered by the lock, so every write of the
/// exited thread is visible to the thread that takes its index. Each thread reads and writes only its own thread-statics.</para>
/// </remarks>
internal static class ThreadIndex
{
    /// <summary>Holds the index for as long as the thread lives (only this thread-static references it).</summary>
    [ThreadStatic]
    private static Lease? t_lease;

    private static readonly Lock s_lock = new();
    private static readonly PriorityQueue<int, int> s_free = new(); // the lowest first: tables stay as short as the threads alive
    private static int s_highest;

    /// <summary>The calling thread's index, or 0 when it has none yet.</summary>
    internal static int Current
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => ThreadKeys.Index;
    }

    /// <summary>The calling thread's index, taken on the thread's first call (the lowest free one).</summary>
    internal static int Acquire() => ThreadKeys.Index != 0 ? ThreadKeys.Index : AcquireSlow();

    /// <summary>Indexes handed out and not yet given back (tests).</summary>
    internal static int InUse
    {
        get
        {
            lock (s_lock) return s_highest - s_free.Count;
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int AcquireSlow()
    {
        int index;
        lock (s_lock)
        {
            index = s_free.Count > 0 ? s_free.Dequeue() : ++s_highest;
        }
        t_lease = new Lease(index);
        return ThreadKeys.Index = index;
    }

    private static void Release(int index)
    {
        lock (s_lock) s_free.Enqueue(index, index);
    }

    /// <summary>The thread's hold on its index: finalized once the thread has exited.</summary>
    private sealed class Lease(int index)
    {
        ~Lease() => Release(index);
    }
}
