using System.Diagnostics.CodeAnalysis;
using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Manaloc.Threading;

/// <summary>The per-thread record of the writer identity and the read locks held, for recursion checks and checked exits.</summary>
public sealed partial class SlimReaderWriterLock
{
    /// <summary>
    /// The calling thread's identity and read locks, reached through one thread-static reference.
    /// The common case, one read lock held, lives in <see cref="First"/> and costs the fast paths a
    /// load and a compare; a thread holding several read locks at once keeps the others in a small
    /// array, reached only by the out-of-line paths. Only the owning thread touches its record: no
    /// synchronization (other threads only ever compare a lock's writer id with their own).
    /// </summary>
    private sealed class ThreadRecord
    {
        [ThreadStatic] private static ThreadRecord? t_current;

        private static int s_lastSlot;

        /// <summary>The thread's managed id (never 0): what a lock stores as its writer.</summary>
        public readonly int ThreadId = Environment.CurrentManagedThreadId;

        /// <summary>The thread this record belongs to (a writer waiting for readers checks whether it is still alive).</summary>
        public readonly Thread Owner = Thread.CurrentThread;

        /// <summary>
        /// Byte offset, in every lock's slot array, of the reader slot this thread uses. Slots are handed
        /// out in sequence, so up to <see cref="SlotCount"/> threads that start together use distinct slots.
        /// </summary>
        public readonly nint SlotOffset = (nint)(Interlocked.Increment(ref s_lastSlot) & (SlotCount - 1)) * Unsafe.SizeOf<Padded<long>>(); // uniqueness only: orders nothing

        /// <summary>Read locks taken through the state word until this thread next asks whether a lock's bias may come back.</summary>
        public int BiasCheckCountdown;

        /// <summary>
        /// Id of a read lock this thread holds, 0 if none; negated (<c>-id</c>) if that read lock was taken
        /// through the lock's reader slots (biased) rather than its state word. Only this field can hold a
        /// biased lock: a thread that already holds a read lock takes the next one through the state word.
        /// Invariant: 0 only if <see cref="_moreCount"/> is 0.
        /// </summary>
        public long First;
        private long[] _more = [];
        private int _moreCount;

        /// <summary>The calling thread's record, or null before its first use of any lock.</summary>
        public static ThreadRecord? Current
        {
            [MethodImpl(MethodImplOptions.AggressiveInlining)]
            get => t_current;
        }

        /// <summary>Read locks held beyond <see cref="First"/>.</summary>
        public int MoreCount => _moreCount;

        /// <summary>The calling thread's record, created on first use.</summary>
        public static ThreadRecord CurrentOrCreate
        {
            [MethodImpl(MethodImplOptions.AggressiveInlining)]
            get => t_current ?? Create();
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static ThreadRecord Create()
        {
            var record = new ThreadRecord();
            Register(record);
            return t_current = record;
        }

        /// <summary>True if this thread holds no read lock at all.</summary>
        public bool HoldsNothing => First == 0 && _moreCount == 0;

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public bool Holds(long id)
        {
            if (First == id || First == -id) return true;
            for (int i = 0; i < _moreCount; i++)
            {
                if (_more[i] == id) return true;
            }
            return false;
        }

        /// <summary>Grows the record before a lock is taken, so <see cref="Add"/> after it cannot fail.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void EnsureRoom()
        {
            if (First != 0 && _moreCount == _more.Length) Grow();
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private void Grow() => Array.Resize(ref _more, Math.Max(4, _moreCount * 2));

        /// <summary>Records a read lock now held; <see cref="EnsureRoom"/> ran before it was taken.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void Add(long id)
        {
            Debug.Assert(id > 0 && !Holds(id), "A lock is recorded once, and only First holds a biased (negated) id.");
            if (First == 0)
            {
                Debug.Assert(_moreCount == 0, "First is empty only when nothing else is held.");
                First = id;
            }
            else
            {
                _more[_moreCount++] = id;
            }
        }

        /// <summary>Forgets a read lock (biased or not); false if this thread does not hold it.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public bool Remove(long id)
        {
            if (First == id || First == -id)
            {
                // Keep the invariant: refill First from the others (innermost first).
                First = _moreCount == 0 ? 0 : _more[--_moreCount];
                return true;
            }
            var more = _more;
            int last = _moreCount - 1;
            if (last >= 0 && more[last] == id)
            {
                _moreCount = last; // the innermost: the usual order
                return true;
            }
            return RemoveOutOfOrder(id);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private bool RemoveOutOfOrder(long id)
        {
            var more = _more;
            int last = _moreCount - 1;
            for (int i = last - 1; i >= 0; i--)
            {
                if (more[i] == id)
                {
                    Array.Copy(more, i + 1, more, i, last - i);
                    _moreCount = last;
                    return true;
                }
            }
            return false;
        }
    }
}
