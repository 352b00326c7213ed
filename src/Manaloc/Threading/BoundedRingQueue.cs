using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;

namespace Manaloc.Threading;

/// <summary>What <see cref="BoundedRingQueue{T}.TryEnqueue"/> did with an item.</summary>
internal enum EnqueueResult { Accepted, Full, Closed }

/// <summary>
/// The bounded multi-producer, multi-consumer queue under <see cref="DedicatedThreadDispatcher"/>: a ring of slots after
/// Dmitry Vyukov's design, with a capacity and a close. It only queues; who sleeps, who is woken, the statistics and the
/// shutdown's drain are the dispatcher's.
/// </summary>
/// <remarks>
/// <para>Memory ordering: each slot carries a sequence number. A producer claims position <c>t</c> by a CAS on the tail,
/// writes the item, then publishes it with a release store of sequence <c>t+1</c>; a consumer claims position <c>h</c> by a
/// CAS on the head once it reads (acquire) sequence <c>h+1</c>, takes the item, and frees the slot with a release store of
/// <c>h + ring size</c>. So each position is claimed by exactly one producer and one consumer, and an item is read only
/// after it was written. <see cref="Close"/> sets a closed bit in the tail with one atomic OR: every later claim's CAS
/// fails, so the set of accepted positions is final at that instant, and a drain that dequeues until the head reaches the
/// returned tail takes every one of them (waiting for claimed-but-unpublished ones). The claiming CASes are full fences,
/// which the dispatcher's sleep handshakes rely on (a read of a waiter count after an enqueue or a dequeue).</para>
/// <para>Capacity: the tail never runs more than <see cref="Capacity"/> positions ahead of the head. Producers estimate
/// the head from a cached copy that only lags (it is a value the head once had), so the estimate overstates the queue and
/// never lets it exceed the capacity; they read the real head (a cache line the consumers write per item) only when the
/// estimate says full and on every <see cref="DepthSampleInterval"/>-th position, where they also report the depth.</para>
/// <para>Thread safety: every member is safe from any thread.</para>
/// </remarks>
internal sealed class BoundedRingQueue<T> where T : class
{
    /// <summary>The tail's bit that says the queue is closed.</summary>
    internal const long ClosedBit = 1L << 62;

    /// <summary>Producers read the real head (and report the depth) on every this-many-th position, besides whenever the queue looks full.</summary>
    internal const int DepthSampleInterval = 64;

    private struct Slot
    {
        public long Sequence; // == position: free for it; == position + 1: holds its item
        public T? Item;
    }

    private readonly Slot[] _slots;         // power-of-two ring, at least Capacity long
    private readonly int _capacity;
    private Padded<long> _head;             // next position to take; CAS by consumers
    private Padded<long> _tail;             // next position to fill, | ClosedBit once closed; CAS by producers
    private Padded<long> _headCache;        // a recent value of _head, read by producers instead of _head

    /// <summary>An empty, open queue of at most <paramref name="capacity"/> items (1 to 2^30; the caller validates).</summary>
    public BoundedRingQueue(int capacity)
    {
        Debug.Assert(capacity is > 0 and <= 1 << 30, "the dispatcher's options validate the capacity");
        _capacity = capacity;
        _slots = new Slot[(int)System.Numerics.BitOperations.RoundUpToPowerOf2((uint)capacity)];
        for (int i = 0; i < _slots.Length; i++) _slots[i].Sequence = i;
    }

    /// <summary>The most items queued at once.</summary>
    public int Capacity => _capacity;

    /// <summary>True once <see cref="Close"/> has run (acquire: what the closer did before is visible).</summary>
    public bool IsClosed => (Volatile.Read(ref _tail.Value) & ClosedBit) != 0;

    /// <summary>Positions taken so far (the next one to take).</summary>
    public long Head => Volatile.Read(ref _head.Value);

    /// <summary>Positions claimed so far (accepted items, published or about to be), without the closed bit.</summary>
    public long Tail => Volatile.Read(ref _tail.Value) & ~ClosedBit;

    /// <summary>The tail as stored, closed bit included: one read that says both how far producers got and whether it is closed.</summary>
    public long TailAndClosedBit => Volatile.Read(ref _tail.Value);

    /// <summary>Items queued now: claimed and not yet taken (a snapshot; the tail is read first, so never negative).</summary>
    public long Count
    {
        get
        {
            long tail = Tail;
            return Math.Max(0, tail - Head);
        }
    }

    /// <summary>Queues <paramref name="item"/> unless the queue is full or closed.</summary>
    /// <param name="item">The item; not null.</param>
    /// <param name="depth">The depth the producer saw when it read the real head: the capacity when full, the depth with this
    /// item when it sampled (every <see cref="DepthSampleInterval"/>-th position); 0 when it did not read the head.</param>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public EnqueueResult TryEnqueue(T item, out long depth)
    {
        var slots = _slots;
        SpinWait spin = default;
        depth = 0;
        while (true)
        {
            long tail = Volatile.Read(ref _tail.Value); // acquire: the tail before the head, so tail - head never overstates room
            if ((tail & ClosedBit) != 0) return EnqueueResult.Closed;
            long head = Volatile.Read(ref _headCache.Value);
            bool fresh = tail - head >= _capacity || (tail & (DepthSampleInterval - 1)) == 0;
            if (fresh)
            {
                head = Volatile.Read(ref _head.Value);
                Volatile.Write(ref _headCache.Value, head); // a racing refresh may store an older head: still a lower bound
                if (tail - head >= _capacity)
                {
                    depth = _capacity;
                    return EnqueueResult.Full;
                }
            }
            ref Slot slot = ref slots[tail & (slots.Length - 1)];
            long sequence = Volatile.Read(ref slot.Sequence); // acquire: pairs with the release that freed the slot
            if (sequence == tail)
            {
                // CAS claims position tail; it fails if another producer claimed it or Close set the closed bit.
                if (Interlocked.CompareExchange(ref _tail.Value, tail + 1, tail) == tail)
                {
                    Debug.Assert(slot.Item is null, "a free slot holds no item");
                    slot.Item = item;
                    Volatile.Write(ref slot.Sequence, tail + 1); // release: publishes Item to the consumer of position tail
                    if (fresh) depth = tail + 1 - head;
                    return EnqueueResult.Accepted;
                }
            }
            else if (sequence < tail)
            {
                // The consumer of the slot's previous lap has claimed it but not freed it yet. Default
                // SpinOnce: it falls back to Sleep(1), so a preempted consumer gets the core back.
                spin.SpinOnce();
            }
            // sequence > tail: our tail was stale; read it again.
        }
    }

    /// <summary>Takes the oldest item; false only when the queue is empty (head == claimed tail).</summary>
    public bool TryDequeue([NotNullWhen(true)] out T? item)
    {
        var slots = _slots;
        SpinWait spin = default;
        while (true)
        {
            long head = Volatile.Read(ref _head.Value);
            ref Slot slot = ref slots[head & (slots.Length - 1)];
            long sequence = Volatile.Read(ref slot.Sequence); // acquire: pairs with the producer's publishing release
            if (sequence == head + 1)
            {
                // CAS claims position head (a full fence).
                if (Interlocked.CompareExchange(ref _head.Value, head + 1, head) == head)
                {
                    item = slot.Item!;
                    Debug.Assert(item is not null, "a published slot holds its item");
                    slot.Item = null;
                    Volatile.Write(ref slot.Sequence, head + slots.Length); // release: frees the slot for the next lap
                    return true;
                }
            }
            else if (sequence <= head)
            {
                if (head == (Volatile.Read(ref _tail.Value) & ~ClosedBit))
                {
                    item = null;
                    return false; // empty
                }
                // A producer has claimed position head and not published it yet: a few instructions
                // away unless it was preempted, so default SpinOnce (falls back to Sleep(1), which lets
                // a lower-priority or descheduled producer run; Yield and Sleep(0) may not). A drain
                // after Close waits here too.
                spin.SpinOnce();
            }
            // sequence > head + 1: our head was stale; read it again.
        }
    }

    /// <summary>Closes the queue (once; later calls change nothing) and returns the final tail: every position below it was
    /// accepted, and no enqueue succeeds from now on.</summary>
    public long Close()
    {
        long finalTail = Interlocked.Or(ref _tail.Value, ClosedBit) & ~ClosedBit;
        Debug.Assert(Volatile.Read(ref _head.Value) <= finalTail, "the head never passes the tail");
        return finalTail;
    }
}
