using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Manaloc.Threading;

// The producer side of a full queue: blocking, spinning for room, refusing and dropping, per FullQueueMode.
// The ring itself and its memory-ordering argument are in DedicatedThreadDispatcher.Queue.cs.
public sealed partial class DedicatedThreadDispatcher
{
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
