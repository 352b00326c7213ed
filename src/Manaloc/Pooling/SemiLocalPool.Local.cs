using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;

namespace Manaloc.Pooling;

public sealed partial class SemiLocalPool<T>
{
    /// <summary>
    /// One thread's stack and counters. Every field but <see cref="Limit"/>, <see cref="TrimRequested"/>,
    /// <see cref="Closed"/> and the trimmers' bookkeeping (<see cref="RentsAtLastGen2"/>,
    /// <see cref="IdleWindow"/>, <see cref="ClosedByRelease"/>) is written only by
    /// <see cref="Owner"/> (or, after the owner has exited, under the pool's lock); the slots are also
    /// taken with exchanges by a drain once the stack is closed.
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
        /// <summary>
        /// 1 once the pool's Dispose (see <see cref="SemiLocalPool{T}.DrainLiveStacks"/>) or an idle release
        /// (see <see cref="SemiLocalPool{T}.ReleaseIdle"/>) has started to drain this stack from another
        /// thread: from then on every slot is taken with an exchange, by the drain or by the owner, so each
        /// object is dropped exactly once. Set under the pool's lock; an idle release's close is undone by
        /// the owner only, under the lock, on its next slow path (Dispose's never).
        /// </summary>
        public int Closed;
        /// <summary>1 while <see cref="Closed"/> was set by an idle release and the owner has not reopened the stack (under the pool's lock).</summary>
        public int ClosedByRelease;
        /// <summary>Rents served by the slow path (total rents = this + <see cref="LocalHits"/>).</summary>
        public long SlowRents;
        public long LocalHits;
        public long SharedTransfers;
        public long Creations;
        public long Drops;
        public long Trimmed;
        /// <summary>Rents (local hits + slow rents) seen by the last gen-2 trim pass (written by the trimmer only, under the lock).</summary>
        public long RentsAtLastGen2;
        /// <summary>This stack's rents over the last idle period (written by the releaser only, under the lock).</summary>
        public RentWindow IdleWindow;

        /// <summary>Pops the top object (owner thread only): the fast rent path shared by every caller.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public bool TryPop([MaybeNullWhen(false)] out T item)
        {
            int top = Count - 1;
            var items = Items;
            if ((uint)top < (uint)items.Length)
            {
                // Claim the top slot, then look for a drain (an asymmetric Dekker hand-shake: Dispose or an
                // idle release stores Closed = 1, runs a process-wide barrier, then reads Count). Either the
                // drain sees the claim and leaves the slot to us, or we see Closed and leave the stack to
                // the exchanges of the drain; on x86/x64 both stores are plain movs.
                Volatile.Write(ref Count, top);
                if (Volatile.Read(ref Closed) != 0)
                {
                    Volatile.Write(ref Count, top + 1); // un-claim: the owner's slow path or the drain takes the slot with an exchange
                    item = default;
                    return false;
                }
                item = items[top].Value!;
                items[top].Value = null;
                LocalHits++; // rents = local hits + slow rents
                return true;
            }
            item = default;
            return false;
        }

        /// <summary>
        /// Pushes an object if the stack is under its limit and (when <paramref name="scan"/>) does not hold
        /// it already (owner thread only): the fast return path. False sends the caller to the slow path.
        /// </summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public bool TryPush(T item, bool scan)
        {
            int count = Count;
            var items = Items;
            // Limit is lowered to 0 by a trimmer or Dispose (see the class remarks): read it fresh each call.
            if ((uint)count < (uint)Volatile.Read(ref Limit) && (uint)count < (uint)items.Length && (!scan || !Holds(items, count, item)))
            {
                items[count].Value = item;
                Volatile.Write(ref Count, count + 1); // release: the item is visible to a drain that sees the count
                // Publish, then look for a drain (see TryPop): if we see Closed, the drain may have read the
                // old count and missed this object, so the stack drains itself.
                if (Volatile.Read(ref Closed) != 0) DrainClosed();
                return true;
            }
            return false;
        }

        /// <summary>True when <paramref name="item"/> is among the top <see cref="DuplicateScanDepth"/> objects of the stack (owner thread only).</summary>
        public bool Holds(T item) => Holds(Items, Volatile.Read(ref Count), item);

        /// <summary>
        /// Compares <paramref name="item"/> with the top <see cref="DuplicateScanDepth"/> of the
        /// <paramref name="count"/> objects, newest first (a <c>Return(x); Return(x);</c> is found by the first
        /// compare). Plain reference compares, inline: each slot is read once as a reference, which the GC keeps
        /// exact while objects move, so no pin is needed. Slots a closing drain has emptied read as null and
        /// match nothing.
        /// </summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        private static bool Holds(Slot[] items, int count, T item)
        {
            int top = Math.Min(count, items.Length) - 1;
            int from = Math.Max(0, top - (DuplicateScanDepth - 1));
            for (int i = top; i >= from; i--)
            {
                if (ReferenceEquals(items[i].Value, item)) return true;
            }
            return false;
        }

        /// <summary>On the owner thread, once Dispose or an idle release has closed the stack: takes every slot with an exchange and drops what it finds.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void DrainClosed()
        {
            List<T>? dropped = TakeAll(Volatile.Read(ref Count));
            Volatile.Write(ref Count, 0);
            if (dropped is null) return;
            Drops += dropped.Count;
            PoolDrop.DropAll(dropped);
        }

        /// <summary>
        /// Takes slots [0, count) with an exchange each (the owner and a drain may both take from a closed
        /// stack: whoever gets an object drops it, so none is dropped twice or missed).
        /// </summary>
        public List<T>? TakeAll(int count)
        {
            List<T>? taken = null;
            var items = Items;
            count = Math.Min(count, items.Length);
            for (int i = 0; i < count; i++)
            {
                var item = Interlocked.Exchange(ref items[i].Value, null);
                if (item is not null) (taken ??= new List<T>(count)).Add(item);
            }
            return taken;
        }
    }
}
