using System.Runtime.CompilerServices;
using Manaloc.Pooling;

namespace Manaloc.Buffers;

/// <summary>
/// One thread's front tier of one <see cref="BufferManager"/>: a single "hot" buffer per size class,
/// reached with one thread-static lookup (as ArrayPool.Shared's per-thread slots), in front of the
/// class's semi-local stack.
/// </summary>
/// <remarks>
/// Written by its owner thread with plain stores. A trimmer or Dispose may take a hot buffer away with
/// <see cref="Interlocked.Exchange{T}(ref T, T)"/>; racing with the owner, the buffer is then either
/// rented by the owner or forgotten by the trimmer, never both kept and handed out (byte arrays need no
/// disposal, so forgetting one is harmless).
/// </remarks>
internal sealed class BufferThreadCache(long token, Thread owner) : ThreadSlotEntry(token)
{
    public readonly Thread Owner = owner;
    public ClassSlots Slots;

    /// <summary>One size class's front tier on this thread.</summary>
    internal struct ClassSlot
    {
        /// <summary>The hot buffer; only ever filled while the stack is empty, so no buffer is in both.</summary>
        public byte[]? Hot;
        /// <summary>This thread's stack in the class pool, once it exists.</summary>
        public SemiLocalPool<byte[]>.Local? Stack;
        /// <summary>
        /// False only when <see cref="Stack"/> is surely empty: set after every return that reached the
        /// stack, recomputed after every rent served by the class pool (the only ways it fills).
        /// </summary>
        public bool StackMayHoldBuffers;
        public long Rents;
        public long Drops;
        /// <summary>Rents seen by the last gen-2 pass (trimmer only, under the manager's lock).</summary>
        public long RentsAtLastGen2;
    }

    /// <summary>Room for every class from 16 B to 1 GiB.</summary>
    [InlineArray(27)]
    internal struct ClassSlots
    {
        private ClassSlot _first;
    }
}
