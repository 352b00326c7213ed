using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;

namespace Manaloc.Pooling;

public sealed partial class SemiLocalPool<T>
{
    /// <summary>
    /// One thread's stack and counters. Every field but <see cref="Limit"/>, <see cref="TrimRequested"/>
    /// and <see cref="RentsAtLastGen2"/> is written only by <see cref="Owner"/> (or, after the owner has
    /// exited, under the pool's lock).
    /// </summary>
    internal sealed class Local(long token, int capacity, Thread owner) : ThreadSlotEntry(token)
    {
        public readonly Slot[] Items = new Slot[capacity];
        public readonly Thread Owner = owner;
        /// <summary>Objects on the stack.</summary>
        public int Count;
        /// <summary>Slots of the global budget this stack holds; Count ≤ Credit ≤ capacity.</summary>
        public int Credit;
        /// <summary>The fast return path's bound: Credit normally, 0 when a trim or Dispose asks the owner to act.</summary>
        public int Limit;
        /// <summary>1 when a trimmer asked the owner to empty its stack.</summary>
        public int TrimRequested;
        /// <summary>Rents served by the slow path (total rents = this + <see cref="LocalHits"/>).</summary>
        public long SlowRents;
        public long LocalHits;
        public long SharedTransfers;
        public long Creations;
        public long Drops;
        public long Trimmed;
        /// <summary>Rents (local hits + slow rents) seen by the last gen-2 trim pass (written by the trimmer only, under the lock).</summary>
        public long RentsAtLastGen2;

        /// <summary>Pops the top object (owner thread only): the fast rent path shared by every caller.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public bool TryPop([MaybeNullWhen(false)] out T item)
        {
            int top = Count - 1;
            var items = Items;
            if ((uint)top < (uint)items.Length)
            {
                item = items[top].Value!;
                items[top].Value = null;
                Count = top;
                LocalHits++; // rents = local hits + slow rents
                return true;
            }
            item = default;
            return false;
        }

        /// <summary>Pushes an object if the stack is under its limit (owner thread only): the fast return path.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public bool TryPush(T item)
        {
            int count = Count;
            var items = Items;
            // Limit is lowered to 0 by a trimmer or Dispose (see the class remarks): read it fresh each call.
            if ((uint)count < (uint)Volatile.Read(ref Limit) && (uint)count < (uint)items.Length)
            {
                items[count].Value = item;
                Count = count + 1;
                return true;
            }
            return false;
        }
    }
}
