using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Manaloc.Threading;

// The bounded ring: claiming and publishing positions, taking items, waking workers and producers.
// The producer side of a full queue (blocking, spinning, refusing, dropping) is in DedicatedThreadDispatcher.FullQueue.cs.
public sealed partial class DedicatedThreadDispatcher
{
    private readonly Slot[] _slots;         // power-of-two ring, at least _capacity long
    private Padded<long> _head;             // next position to take; CAS by workers, the drain and droppers
    private Padded<long> _tail;             // next position to fill, | ClosedBit once shut down; CAS by producers
    private Padded<long> _headCache;        // a recent value of _head, read by producers instead of _head
    private readonly object _workLock = new();   // idle workers wait here
    private readonly object _spaceLock = new();  // producers blocked on a full queue wait here
    private TaskCompletionSource? _spaceSignal;  // asynchronous producers' wake-up; under _spaceLock
    private int _idleWorkers;               // workers between "about to sleep" and "awake"; Dekker partner of the tail CAS
    private int _waitingProducers;          // producers between "about to sleep" and "done"; Dekker partner of the head CAS
    private long _deepest;                  // deepest queue seen (exact when it fills; sampled every 64th item otherwise)
    private readonly StripedCounter _rejected = new(); // striped: a FailFast or DropOldest flood bumps these per post
    private readonly StripedCounter _dropped = new();
    private long _returned;
    private volatile bool _abandon;         // set at the shutdown deadline: workers stop before their next item

    private enum EnqueueResult { Accepted, Full, Closed }

    /// <summary>Producers registered as waiting for room (blocked or awaiting); a snapshot, for tests.</summary>
    internal int WaitingProducerCount => Volatile.Read(ref _waitingProducers);

    private struct Slot
    {
        public long Sequence; // == position: free for it; == position + 1: holds its item
        public Action? Item;
    }

    private static Slot[] CreateSlots(int capacity)
    {
        var slots = new Slot[(int)System.Numerics.BitOperations.RoundUpToPowerOf2((uint)capacity)];
        for (int i = 0; i < slots.Length; i++) slots[i].Sequence = i;
        return slots;
    }

    /// <summary>Producers read the real head (and sample the depth) on every this-many-th position, besides whenever the queue looks full.</summary>
    private const int DepthSampleInterval = 64;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private EnqueueResult TryEnqueue(Action item)
    {
        var slots = _slots;
        SpinWait spin = default;
        while (true)
        {
            long tail = Volatile.Read(ref _tail.Value); // acquire: the tail before the head, so tail - head never overstates room
            if ((tail & ClosedBit) != 0) return EnqueueResult.Closed;
            // The cached head lags the real one (it is only ever a value the head once had), so the
            // estimate overstates the queue and never lets it exceed the capacity. Reading the real
            // head costs a cache miss (workers write it per item), so producers read it only when
            // the estimate says full and on every DepthSampleInterval-th position, where they also
            // sample the depth.
            long head = Volatile.Read(ref _headCache.Value);
            bool fresh = tail - head >= _capacity || (tail & (DepthSampleInterval - 1)) == 0;
            if (fresh)
            {
                head = Volatile.Read(ref _head.Value);
                Volatile.Write(ref _headCache.Value, head); // a racing refresh may store an older head: still a lower bound
                if (tail - head >= _capacity)
                {
                    if (_capacity > Volatile.Read(ref _deepest)) RaiseDeepest(_capacity);
                    return EnqueueResult.Full;
                }
            }
            ref Slot slot = ref slots[tail & (slots.Length - 1)];
            long sequence = Volatile.Read(ref slot.Sequence); // acquire: pairs with the release that freed the slot
            if (sequence == tail)
            {
                // CAS claims position tail; it fails if another producer claimed it or Close set the
                // closed bit. Full fence: orders the claim before WakeWorkerIfIdle's read of _idleWorkers.
                if (Interlocked.CompareExchange(ref _tail.Value, tail + 1, tail) == tail)
                {
                    Debug.Assert(slot.Item is null, "a free slot holds no item");
                    slot.Item = item;
                    Volatile.Write(ref slot.Sequence, tail + 1); // release: publishes Item to the consumer of position tail
                    if (fresh && tail + 1 - head > Volatile.Read(ref _deepest)) RaiseDeepest(tail + 1 - head);
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
    private bool TryDequeue([System.Diagnostics.CodeAnalysis.NotNullWhen(true)] out Action? item)
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
                // CAS claims position head. Full fence: orders the claim before the read of _waitingProducers below.
                if (Interlocked.CompareExchange(ref _head.Value, head + 1, head) == head)
                {
                    item = slot.Item!;
                    Debug.Assert(item is not null, "a published slot holds its item");
                    slot.Item = null;
                    Volatile.Write(ref slot.Sequence, head + slots.Length); // release: frees the slot for the next lap
                    if (Volatile.Read(ref _waitingProducers) != 0) WakeProducersIfRoom(head + 1);
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
                // a lower-priority or descheduled producer run; Yield and Sleep(0) may not). The
                // shutdown drain and exiting workers wait here too.
                spin.SpinOnce();
            }
            // sequence > head + 1: our head was stale; read it again.
        }
    }

    private void RaiseDeepest(long depth)
    {
        long seen = Volatile.Read(ref _deepest);
        // CAS loop: a maximum that only grows; a lost race retries against the larger value.
        while (depth > seen)
        {
            long previous = Interlocked.CompareExchange(ref _deepest, depth, seen);
            if (previous == seen) return;
            seen = previous;
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void WakeWorkerIfIdle()
    {
        // Read after the claim CAS (a full fence) in TryEnqueue: see WaitForWork.
        if (Volatile.Read(ref _idleWorkers) != 0)
        {
            lock (_workLock) Monitor.Pulse(_workLock);
        }
    }

    private void WakeAllWorkers()
    {
        lock (_workLock) Monitor.PulseAll(_workLock);
    }

    /// <summary>
    /// Called by a consumer that just freed a slot while producers wait: wakes them all once the
    /// queue is down to the resume mark (1/16 of it free), so blocked producers refill it in one
    /// burst and block again — one wake-up per batch, not a wake-up (and a context switch on each
    /// side) per item. A producer blocked above the mark also re-checks on its own every
    /// <see cref="RoomPollMilliseconds"/> and then takes any free slot: without that, a worker whose
    /// item waits for that producer's Post to return would deadlock with it beside free slots.
    /// </summary>
    private void WakeProducersIfRoom(long head)
    {
        long queued = (Volatile.Read(ref _tail.Value) & ~ClosedBit) - head;
        if (queued <= _resumeMark) WakeProducers();
    }

    private void WakeProducers()
    {
        lock (_spaceLock)
        {
            Monitor.PulseAll(_spaceLock);
            var signal = _spaceSignal; // asynchronous waiters share one signal: all of them retry
            _spaceSignal = null;
            signal?.TrySetResult();
        }
    }
}
