using System.Runtime.CompilerServices;

namespace Manaloc.Threading;

/// <summary>Per-thread record of the read locks held, for recursion checks and checked exits.</summary>
public sealed partial class SlimReaderWriterLock
{
    /// <summary>
    /// The read locks the current thread holds, innermost last. Thread-static, so no
    /// synchronization: only the owning thread touches its list.
    /// </summary>
    private static class ReadLocksHeld
    {
        [ThreadStatic] private static SlimReaderWriterLock?[]? t_locks;
        [ThreadStatic] private static int t_count;

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public static bool Contains(SlimReaderWriterLock rwLock)
        {
            int count = t_count;
            if (count == 0) return false;
            var locks = t_locks!;
            for (int i = 0; i < count; i++)
            {
                if (ReferenceEquals(locks[i], rwLock)) return true;
            }
            return false;
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public static void Add(SlimReaderWriterLock rwLock)
        {
            var locks = t_locks;
            int count = t_count;
            if (locks is null || count == locks.Length) locks = Grow();
            locks[count] = rwLock;
            t_count = count + 1;
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public static bool Remove(SlimReaderWriterLock rwLock)
        {
            int count = t_count;
            var locks = t_locks;
            if (count > 0 && ReferenceEquals(locks![count - 1], rwLock))
            {
                locks[count - 1] = null;
                t_count = count - 1;
                return true;
            }
            return RemoveOutOfOrder(rwLock);
        }

        private static bool RemoveOutOfOrder(SlimReaderWriterLock rwLock)
        {
            int count = t_count;
            var locks = t_locks;
            for (int i = count - 2; i >= 0; i--)
            {
                if (ReferenceEquals(locks![i], rwLock))
                {
                    Array.Copy(locks, i + 1, locks, i, count - i - 1);
                    locks[count - 1] = null;
                    t_count = count - 1;
                    return true;
                }
            }
            return false;
        }

        private static SlimReaderWriterLock?[] Grow()
        {
            var old = t_locks;
            var grown = new SlimReaderWriterLock?[old is null ? 4 : old.Length * 2];
            if (old is not null) Array.Copy(old, grown, old.Length);
            t_locks = grown;
            return grown;
        }
    }
}
