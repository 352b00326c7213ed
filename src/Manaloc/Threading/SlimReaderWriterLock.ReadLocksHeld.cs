using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Manaloc.Threading;

/// <summary>Per-thread record of the read locks held, for recursion checks and checked exits.</summary>
public sealed partial class SlimReaderWriterLock
{
    /// <summary>
    /// The calling thread's record: its managed thread id and the read locks it holds, innermost
    /// last. One thread-static reference, so an enter or exit pays one thread-local lookup. Only the
    /// owning thread touches its record: no synchronization.
    /// </summary>
    private sealed class ThreadRecord
    {
        [ThreadStatic] private static ThreadRecord? t_current;

        public readonly int ThreadId = Environment.CurrentManagedThreadId;
        private SlimReaderWriterLock?[] _locks = new SlimReaderWriterLock?[4];
        private int _count;

        public static ThreadRecord Current
        {
            [MethodImpl(MethodImplOptions.AggressiveInlining)]
            get => t_current ?? Create();
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static ThreadRecord Create() => t_current = new ThreadRecord();

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public bool Holds(SlimReaderWriterLock rwLock)
        {
            int count = _count;
            if (count == 0) return false;
            var locks = _locks;
            for (int i = 0; i < count; i++)
            {
                if (ReferenceEquals(locks[i], rwLock)) return true;
            }
            return false;
        }

        /// <summary>Grows the record before a lock is taken, so <see cref="Add"/> after it cannot fail.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void EnsureRoom()
        {
            if (_count == _locks.Length) Array.Resize(ref _locks, _count * 2);
        }

        /// <summary>Records a read lock now held; <see cref="EnsureRoom"/> ran before it was taken.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void Add(SlimReaderWriterLock rwLock)
        {
            int count = _count;
            Debug.Assert(count < _locks.Length, "EnsureRoom runs before the lock is taken.");
            _locks[count] = rwLock;
            _count = count + 1;
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public bool Remove(SlimReaderWriterLock rwLock)
        {
            int count = _count;
            if (count > 0 && ReferenceEquals(_locks[count - 1], rwLock))
            {
                _locks[count - 1] = null;
                _count = count - 1;
                return true;
            }
            return RemoveOutOfOrder(rwLock);
        }

        private bool RemoveOutOfOrder(SlimReaderWriterLock rwLock)
        {
            int count = _count;
            var locks = _locks;
            for (int i = count - 2; i >= 0; i--)
            {
                if (ReferenceEquals(locks[i], rwLock))
                {
                    Array.Copy(locks, i + 1, locks, i, count - i - 1);
                    locks[count - 1] = null;
                    _count = count - 1;
                    return true;
                }
            }
            return false;
        }
    }
}
