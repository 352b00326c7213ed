using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Manaloc.Threading;

// The bounded ring and the producer side: claiming, publishing, blocking, refusing and dropping.
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

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void PostSlow(Action item)
    {
        switch (TryEnqueue(item))
        {
            case EnqueueResult.Accepted:
                WakeWorkerIfIdle();
                return;
            case EnqueueResult.Closed:
                _rejected.Increment();
                ThrowHelper.ThrowShuttingDown(_name);
                return;
        }
        switch (_fullMode)
        {
            case FullQueueMode.Block:
                if (SpinForRoom(item)) return;
                if (t_current == this)
                {
                    // Only workers make room; a worker waiting for room could wait for itself.
                    _rejected.Increment();
                    ThrowHelper.ThrowFullFromWorker(_name, _capacity);
                }
                PostBlocking(item);
                return;
            case FullQueueMode.DropOldest:
                if (!PostDroppingOldest(item)) ThrowHelper.ThrowShuttingDown(_name);
                return;
            default:
                _rejected.Increment();
                ThrowHelper.ThrowFull(_name, _capacity);
                return;
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool TryPostSlow(Action item, EnqueueResult result)
    {
        if (result == EnqueueResult.Full && _fullMode == FullQueueMode.DropOldest)
        {
            return PostDroppingOldest(item);
        }
        _rejected.Increment();
        return false;
    }

    /// <summary>
    /// How often a producer blocked above the resume mark re-checks the queue by itself and takes
    /// any free slot: the liveness guarantee when no worker brings the queue down to the mark.
    /// </summary>
    private const int RoomPollMilliseconds = 1;

    /// <summary>True when the queue is at or below the resume mark (a snapshot).</summary>
    private bool BelowResumeMark()
        // acquire reads, tail first: a stale head only overstates the depth, so this never says
        // "room" too early; the decision that matters is TryEnqueue's.
        => (Volatile.Read(ref _tail.Value) & ~ClosedBit) - Volatile.Read(ref _head.Value) <= _resumeMark;

    /// <summary>
    /// Spins, then yields, for a bounded while until the queue is down to the resume mark, and
    /// queues the item then; true once queued. Spinning for any single free slot would keep the
    /// producer awake at the consumer's pace, one item per slot freed, for as long as the consumer
    /// is slower — burning a core that the rest of the application needs.
    /// </summary>
    private bool SpinForRoom(Action item)
    {
        SpinWait spin = default;
        for (int i = 0; i < SpinIterations; i++)
        {
            spin.SpinOnce(sleep1Threshold: -1);
            if (!BelowResumeMark())
            {
                if ((Volatile.Read(ref _tail.Value) & ClosedBit) != 0) return false; // PostBlocking reports it
                continue;
            }
            var result = TryEnqueue(item);
            if (result == EnqueueResult.Accepted)
            {
                WakeWorkerIfIdle();
                return true;
            }
            if (result == EnqueueResult.Closed) return false; // PostBlocking reports it
        }
        return false;
    }

    /// <summary>
    /// Waits for room: until the queue is down to the resume mark, or for any free slot once a
    /// <see cref="RoomPollMilliseconds"/> wait passed without a wake-up. Dekker handshake with
    /// TryDequeue: we increment _waitingProducers (a full fence) and then read the head; a consumer
    /// CASes the head (a full fence) and then reads _waitingProducers. If our read missed the
    /// consumer's step to the mark, that consumer sees us waiting and takes _spaceLock to pulse all
    /// waiters — which it can only do after we are inside Monitor.Wait. The count stays raised for
    /// the whole loop, so every later consumer sees it too. Should a wake-up still be missed (the
    /// mark passed while another producer refilled the queue), the timed wait re-checks anyway:
    /// the handshake makes resuming prompt, the poll makes it certain.
    /// </summary>
    private void PostBlocking(Action item)
    {
        lock (_spaceLock)
        {
            Interlocked.Increment(ref _waitingProducers); // full fence: before the re-check of the head
            try
            {
                bool polled = false;
                while (true)
                {
                    if (polled || BelowResumeMark())
                    {
                        var result = TryEnqueue(item);
                        if (result == EnqueueResult.Accepted) break;
                        if (result == EnqueueResult.Closed) ThrowClosedWhileWaiting();
                    }
                    else if ((Volatile.Read(ref _tail.Value) & ClosedBit) != 0) // acquire: Close sets the bit before it pulses
                    {
                        ThrowClosedWhileWaiting();
                    }
                    polled = !Monitor.Wait(_spaceLock, RoomPollMilliseconds);
                }
            }
            finally
            {
                Interlocked.Decrement(ref _waitingProducers);
            }
        }
        WakeWorkerIfIdle();
    }

    private void ThrowClosedWhileWaiting()
    {
        _rejected.Increment();
        ThrowHelper.ThrowShuttingDown(_name);
    }

    /// <summary>
    /// The asynchronous form of <see cref="PostBlocking"/>, with the same handshake, resume mark
    /// and poll (asynchronous waiters share one signal, completed at the mark).
    /// </summary>
    private async ValueTask PostWaitAsync(Action item, CancellationToken cancellationToken)
    {
        bool polled = false;
        while (true)
        {
            Task signal;
            lock (_spaceLock)
            {
                Interlocked.Increment(ref _waitingProducers); // full fence: before the re-check of the head
                var result = polled || BelowResumeMark() ? TryEnqueue(item)
                    : (Volatile.Read(ref _tail.Value) & ClosedBit) != 0 ? EnqueueResult.Closed : EnqueueResult.Full; // acquire: Close sets the bit before it signals
                if (result != EnqueueResult.Full)
                {
                    Interlocked.Decrement(ref _waitingProducers);
                    if (result == EnqueueResult.Closed)
                    {
                        _rejected.Increment();
                        throw ThrowHelper.ShuttingDown(_name);
                    }
                    break;
                }
                signal = (_spaceSignal ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).Task;
            }
            try
            {
                // The poll is a liveness re-check, not a deadline the caller sees: it runs on the
                // system timer, like PostBlocking's timed Monitor.Wait, whatever the options' clock.
                var wait = signal.WaitAsync(TimeSpan.FromMilliseconds(RoomPollMilliseconds), cancellationToken);
                await wait.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
                if (cancellationToken.IsCancellationRequested)
                {
                    _rejected.Increment(); // a cancelled post is a refused post
                    throw new OperationCanceledException(cancellationToken);
                }
                polled = !signal.IsCompleted;
            }
            finally
            {
                Interlocked.Decrement(ref _waitingProducers);
            }
        }
        WakeWorkerIfIdle();
    }

    /// <summary>Accepts the item, dropping the oldest queued items to the callback until it fits; false when shutting down.</summary>
    private bool PostDroppingOldest(Action item)
    {
        Debug.Assert(_onItemDropped is not null);
        while (true)
        {
            var result = TryEnqueue(item);
            if (result == EnqueueResult.Accepted)
            {
                WakeWorkerIfIdle();
                return true;
            }
            if (result == EnqueueResult.Closed || (Volatile.Read(ref _tail.Value) & ClosedBit) != 0)
            {
                // Closed, or closed since TryEnqueue saw the queue full: refuse before dropping
                // anything. (A close between this check and the dequeue below can still drop one
                // item and then refuse this one; the drop is reported, so nothing is lost unseen.)
                _rejected.Increment();
                return false;
            }
            if (TryDequeue(out var oldest))
            {
                _dropped.Increment();
                try
                {
                    _onItemDropped!(oldest);
                }
                catch (Exception e)
                {
                    ReportFailure(e);
                }
            }
        }
    }
}
