using Manaloc.Pooling;

namespace Manaloc.Buffers;

/// <summary>
/// One thread's front tier of one <see cref="BufferManager"/>: a single "hot" buffer per size class,
/// in front of the class's semi-local stack. The manager a thread used last finds it with one
/// thread-static load and one compare of the never-reused token (which, unlike a reference to the
/// manager, does not keep a dropped manager alive); other managers through the thread's slots.
/// </summary>
/// <remarks>
/// Written by its owner thread with plain stores. A trimmer or Dispose may take a hot buffer away with
/// <see cref="Interlocked.Exchange{T}(ref T, T)"/>; racing with the owner, the buffer is then either
/// rented by the owner or forgotten by the trimmer, never both kept and handed out (byte arrays need no
/// disposal, so forgetting one is harmless).
/// </remarks>
internal sealed class BufferThreadCache(long token, Thread owner, int classes) : ThreadSlotEntry(token)
{
    public readonly Thread Owner = owner;
    /// <summary>One slot per size class of the manager: its length bounds the class index, one check for both.</summary>
    public readonly ClassSlot[] Slots = new ClassSlot[classes];

    /// <summary>One size class's front tier on this thread.</summary>
    internal struct ClassSlot
    {
        /// <summary>The hot buffer; only ever filled while the stack is empty, so no buffer is in both.</summary>
        public byte[]? Hot;
        /// <summary>This thread's stack in the class pool, once it exists.</summary>
        public PoolTier<byte[]>.ThreadStack Stack;
        /// <summary>
        /// False only when <see cref="Stack"/> is surely empty: set after every return that reached the
        /// stack, recomputed after every rent served by the class pool (the only ways it fills).
        /// </summary>
        public bool StackMayHoldBuffers;
        public long Rents;
        /// <summary>Returns of this class made on this thread (kept or not): rents − returns is what is rented now.</summary>
        public long Returns;
        public long Drops;
        /// <summary>Rents seen by the last gen-2 pass (trimmer only, under the manager's lock).</summary>
        public long RentsAtLastGen2;
        /// <summary>This thread's rents of the class over the last idle period (the idle release only, under the manager's lock).</summary>
        public RentWindow IdleWindow;
    }
}
