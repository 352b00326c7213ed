using System.Diagnostics;
using System.Runtime.CompilerServices;
using Manaloc.Platform;

namespace Manaloc.Threading;

/// <summary>
/// A fixed set of dedicated, named background threads serving one bounded queue of work items,
/// kept apart from the shared <see cref="ThreadPool"/>.
/// </summary>
/// <remarks>
/// <para>
/// Why: work on a few dedicated threads cannot starve the rest of the application behind a flood
/// of it in the thread pool's queue; and the queue is capped (by default 10,000 items, producers
/// blocking) because a producer faster than its consumer otherwise grows the queue without bound.
/// </para>
/// <para>
/// Contract: <see cref="Post"/>, <see cref="TryPost"/> and <see cref="PostAsync"/> queue an
/// <see cref="Action"/>; workers run items in queue order (with several workers, items may finish
/// out of order). A full queue blocks, refuses or drops the oldest item, as
/// <see cref="DispatcherOptions.FullMode"/> says. An item that throws is counted, reported to
/// <see cref="DispatcherOptions.OnItemFailed"/> and the <c>Manaloc</c> event source
/// (DispatcherItemFailed), and the worker goes on. <see cref="ShutdownAsync"/> stops accepting,
/// lets the workers drain until a deadline, and hands back every accepted item that did not run:
/// an accepted item is run exactly once, dropped through the drop callback, or returned — never
/// silently lost. Call <see cref="ShutdownAsync"/> or <see cref="Dispose"/>: the threads live until then.
/// </para>
/// <para>
/// Memory ordering: the queue is a <see cref="BoundedRingQueue{T}"/> (a bounded multi-producer,
/// multi-consumer ring after Dmitry Vyukov's design; its argument is in its remarks): each position
/// is claimed by exactly one producer and one consumer, and an item is read only after it was
/// written. Shutdown closes it with one atomic OR: every later claim fails, so the set of accepted
/// positions is final at that instant, and the drain takes every one of them. Sleeping is a Dekker
/// handshake, argued beside <c>WaitForWork</c> and <c>PostBlocking</c>: a sleeper increments a
/// waiter count (a full fence) and then re-checks the queue; the other side changes the queue by a
/// CAS (a full fence) and then reads the count; at least one of them sees the other.
/// </para>
/// <para>Thread safety: every member is safe to call from any thread.</para>
/// </remarks>
public sealed class DedicatedThreadDispatcher : IDisposable
{
    private const long ClosedBit = BoundedRingQueue<Action>.ClosedBit;

    /// <summary>The longest delay a timer (and so <see cref="Task.Delay(TimeSpan, TimeProvider)"/>) accepts; longer drain timeouts are infinite.</summary>
    private static readonly TimeSpan MaxDrainTimeout = TimeSpan.FromMilliseconds(uint.MaxValue - 1);

    [ThreadStatic]
    private static DedicatedThreadDispatcher? t_current; // the dispatcher whose worker this thread is

    // Configuration, fixed by the constructor.
    private readonly string _name;
    private readonly int _capacity;
    private readonly int _resumeMark;
    private readonly FullQueueMode _fullMode;
    private readonly TimeProvider _timeProvider;
    private readonly Action<Exception>? _onItemFailed;
    private readonly Action<Action>? _onItemDropped;
    private readonly Thread[] _threads;

    // The queue and the sleepers' handshakes (the memory-ordering argument is in the remarks above).
    private readonly BoundedRingQueue<Action> _queue; // taken from by workers, the drain and droppers
    private readonly object _workLock = new();   // idle workers wait here
    private readonly object _spaceLock = new();  // producers blocked on a full queue wait here
    private TaskCompletionSource? _spaceSignal;  // asynchronous producers' wake-up; under _spaceLock
    private int _idleWorkers;               // workers between "about to sleep" and "awake"; Dekker partner of the tail CAS
    private int _waitingProducers;          // producers between "about to sleep" and "done"; Dekker partner of the head CAS

    // Statistics (GetStatistics reads them; none orders anything but its own value).
    private readonly Padded<WorkerStats>[] _stats; // one padded block per worker: no false sharing between workers
    private long _deepest;                  // deepest queue seen (exact when it fills; sampled every 64th item otherwise)
    private readonly StripedCounter _rejected = new(); // striped: a FailFast or DropOldest flood bumps these per post
    private readonly StripedCounter _dropped = new();
    private long _returned;
    private int _pinned;
    private long _voluntaryYields;
    private long _busyReported;             // the largest busy time (in timestamp ticks) returned so far

    // Shutdown.
    private readonly TaskCompletionSource _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly object _shutdownGate = new();
    private Task<IReadOnlyList<Action>>? _shutdown;
    private int _liveWorkers;
    private volatile bool _abandon;         // set at the shutdown deadline: workers stop before their next item

    /// <summary>Creates a dispatcher and starts its threads.</summary>
    /// <param name="options">Configuration; the defaults when null.</param>
    /// <exception cref="ArgumentOutOfRangeException">A thread count, capacity or processor number is out of range.</exception>
    /// <exception cref="ArgumentException"><see cref="FullQueueMode.DropOldest"/> without <see cref="DispatcherOptions.OnItemDropped"/>, or an empty name.</exception>
    public DedicatedThreadDispatcher(DispatcherOptions? options = null)
    {
        options ??= new DispatcherOptions();
        Validate(options);
        _name = options.Name;
        _capacity = options.Capacity;
        // All blocked producers resume once 1/16 of the queue is free (one wake-up for a batch);
        // above that mark each freed slot wakes one of them (see WakeProducersIfRoom).
        _resumeMark = _capacity - Math.Max(1, _capacity / 16);
        _fullMode = options.FullMode;
        _timeProvider = options.TimeProvider;
        _onItemFailed = options.OnItemFailed;
        _onItemDropped = options.OnItemDropped;
        _queue = new BoundedRingQueue<Action>(_capacity);
        _stats = new Padded<WorkerStats>[options.ThreadCount];
        _threads = new Thread[options.ThreadCount];
        _liveWorkers = options.ThreadCount;
        var affinity = options.ProcessorAffinity?.ToArray();
        for (int i = 0; i < _threads.Length; i++)
        {
            int index = i;
            int processor = affinity is { Length: > 0 } ? affinity[i % affinity.Length] : -1;
            _threads[i] = new Thread(() => WorkerMain(index, processor))
            {
                IsBackground = true,
                Name = $"{_name} #{i}",
            };
        }
        DispatcherInstruments.Register(this);
        foreach (var thread in _threads) thread.Start();
    }

    /// <summary>The name given in the options.</summary>
    public string Name => _name;

    /// <summary>Number of worker threads.</summary>
    public int ThreadCount => _threads.Length;

    /// <summary>Maximum number of queued items.</summary>
    public int Capacity => _capacity;

    /// <summary>What happens when the queue is full.</summary>
    public FullQueueMode FullMode => _fullMode;

    /// <summary>False once a shutdown has begun.</summary>
    public bool IsAcceptingWork => !_queue.IsClosed;

    /// <summary>Completes when every worker thread has exited (after a shutdown).</summary>
    /// <remarks>A shutdown whose deadline passed returns before items still in progress finish; await this to know they have.</remarks>
    public Task Completion => _completion.Task;

    /// <summary>Queues <paramref name="item"/>; when the queue is full, blocks, throws or drops the oldest item as the mode says.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="item"/> is null.</exception>
    /// <exception cref="InvalidOperationException">The dispatcher is shutting down; or the queue is full in <see cref="FullQueueMode.FailFast"/> mode, or in <see cref="FullQueueMode.Block"/> mode on one of this dispatcher's own workers (where blocking could deadlock). The item was not queued.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Post(Action item)
    {
        ArgumentNullException.ThrowIfNull(item);
        if (TryEnqueue(item) == EnqueueResult.Accepted)
        {
            WakeWorkerIfIdle();
            return;
        }
        PostSlow(item);
    }

    /// <summary>Queues <paramref name="item"/> if that needs no waiting; never blocks.</summary>
    /// <returns>True if queued; false if the queue is full (modes Block and FailFast) or the dispatcher is shutting down.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="item"/> is null.</exception>
    /// <remarks>In <see cref="FullQueueMode.DropOldest"/> mode a full queue drops its oldest item and this returns true.</remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool TryPost(Action item)
    {
        ArgumentNullException.ThrowIfNull(item);
        var result = TryEnqueue(item);
        if (result == EnqueueResult.Accepted)
        {
            WakeWorkerIfIdle();
            return true;
        }
        return TryPostSlow(item, result);
    }

    /// <summary>Queues <paramref name="item"/>, waiting asynchronously for room when the queue is full in <see cref="FullQueueMode.Block"/> mode.</summary>
    /// <returns>A task that completes when the item is queued (not when it has run).</returns>
    /// <exception cref="ArgumentNullException"><paramref name="item"/> is null.</exception>
    /// <exception cref="InvalidOperationException">(In the task.) Shutting down, or full in <see cref="FullQueueMode.FailFast"/> mode; not queued.</exception>
    /// <exception cref="OperationCanceledException">(In the task.) <paramref name="cancellationToken"/> was cancelled before the call or fired while waiting; not queued, and counted in <see cref="DispatcherStatistics.Rejected"/>.</exception>
    public ValueTask PostAsync(Action item, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(item);
        if (cancellationToken.IsCancellationRequested)
        {
            // Cancelled before the call: refused without queueing, as a wait would be (SemaphoreSlim.WaitAsync's rule).
            _rejected.Increment();
            return ValueTask.FromCanceled(cancellationToken);
        }
        var result = TryEnqueue(item);
        if (result == EnqueueResult.Accepted)
        {
            WakeWorkerIfIdle();
            return default;
        }
        if (result == EnqueueResult.Full && _fullMode == FullQueueMode.Block)
        {
            return PostWaitAsync(item, cancellationToken);
        }
        try
        {
            PostSlow(item);
            return default;
        }
        catch (InvalidOperationException e)
        {
            return ValueTask.FromException(e);
        }
    }

    /// <summary>A snapshot of the dispatcher's counters: queued, posted, executed, failed, refused, dropped, returned, the deepest queue, pinned workers, yields and busy time.</summary>
    /// <remarks>
    /// Each counter is read on its own without a lock, so a snapshot taken while items flow may be a little
    /// inconsistent across fields (e.g. an item counted posted but not yet queued); every field is exact once the
    /// dispatcher is idle. Safe from any thread; allocation-free.
    /// </remarks>
    public DispatcherStatistics GetStatistics()
    {
        long tail = _queue.Tail;
        long head = _queue.Head;
        long executed = 0, failed = 0;
        for (int i = 0; i < _stats.Length; i++)
        {
            executed += Volatile.Read(ref _stats[i].Value.Executed);
            failed += Volatile.Read(ref _stats[i].Value.Failed);
        }
        return new DispatcherStatistics
        {
                Queued = Math.Max(0, tail - head),
                Posted = tail,
                Executed = executed,
                Failed = failed,
                Rejected = _rejected.Sum(),
                Dropped = _dropped.Sum(),
                Returned = Volatile.Read(ref _returned),
                DeepestQueue = Volatile.Read(ref _deepest),
                PinnedThreads = Volatile.Read(ref _pinned),
                VoluntaryYields = Interlocked.Read(ref _voluntaryYields), // statistics: orders nothing
                BusyTime = ReadBusyTime(),
        };
    }

    /// <summary>The name and the state, for logs and the debugger: <c>DedicatedThreadDispatcher 'orders': running, 4 threads, 12/10000 queued, 981 executed</c>.</summary>
    /// <remarks>A snapshot of counters read without a lock; the state is one of running, shutting down (no more items accepted) and stopped (every worker exited).</remarks>
    public override string ToString()
    {
        var stats = GetStatistics();
        string state = IsAcceptingWork ? "running" : _completion.Task.IsCompleted ? "stopped" : "shutting down";
        return $"DedicatedThreadDispatcher '{_name}': {state}, {Plural.Of(ThreadCount, "thread")}, {stats.Queued}/{_capacity} queued, {stats.Executed} executed";
    }

    private static void Validate(DispatcherOptions options)
    {
        if (string.IsNullOrWhiteSpace(options.Name))
        {
            ThrowHelper.ThrowArgument(nameof(options), "A dispatcher needs a non-empty Name.");
        }
        if (options.ThreadCount is < 1 or > 1024)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(options), options.ThreadCount, "DispatcherOptions.ThreadCount must be between 1 and 1024.");
        }
        if (options.Capacity is < 1 or > DispatcherOptions.MaxCapacity)
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(options), options.Capacity, $"DispatcherOptions.Capacity must be between 1 and {DispatcherOptions.MaxCapacity}.");
        }
        if (!Enum.IsDefined(options.FullMode))
        {
            ThrowHelper.ThrowArgumentOutOfRange(nameof(options), options.FullMode, "DispatcherOptions.FullMode is not a FullQueueMode value.");
        }
        if (options.FullMode == FullQueueMode.DropOldest && options.OnItemDropped is null)
        {
            ThrowHelper.ThrowArgument(nameof(options), "FullQueueMode.DropOldest needs DispatcherOptions.OnItemDropped, so dropped items are never lost unseen.");
        }
        if (options.TimeProvider is null)
        {
            ThrowHelper.ThrowArgumentNull(nameof(options) + "." + nameof(DispatcherOptions.TimeProvider));
        }
        if (options.ProcessorAffinity is { } affinity)
        {
            foreach (int cpu in affinity)
            {
                if (cpu is < 0 or >= ThreadAffinity.MaxProcessors)
                {
                    ThrowHelper.ThrowArgumentOutOfRange(nameof(options), cpu, $"DispatcherOptions.ProcessorAffinity holds processor numbers from 0 to {ThreadAffinity.MaxProcessors - 1}.");
                }
            }
        }
        Debug.Assert(options.Capacity > 0);
    }

    // The queue (BoundedRingQueue): enqueueing with the depth sampled, dequeueing, waking workers and producers.

    /// <summary>Producers registered as waiting for room (blocked or awaiting); a snapshot, for tests.</summary>
    internal int WaitingProducerCount => Volatile.Read(ref _waitingProducers);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private EnqueueResult TryEnqueue(Action item)
    {
        var result = _queue.TryEnqueue(item, out long depth);
        // The depth is the capacity when the queue was full, a sample every 64th position, else 0: the deepest stays exact at a fill.
        if (depth > Volatile.Read(ref _deepest)) RaiseDeepest(depth);
        return result;
    }

    /// <summary>Takes the oldest item; false only when the queue is empty.</summary>
    private bool TryDequeue([System.Diagnostics.CodeAnalysis.NotNullWhen(true)] out Action? item)
    {
        if (!_queue.TryDequeue(out item)) return false;
        // Read after the queue's claiming CAS (a full fence): the Dekker partner of PostBlocking's increment.
        if (Volatile.Read(ref _waitingProducers) != 0) WakeProducersIfRoom();
        return true;
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
    private void WakeProducersIfRoom()
    {
        if (_queue.Count <= _resumeMark) WakeProducers();
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

    // A full queue, producer side: blocking, spinning for room, refusing and dropping, per FullQueueMode.

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
        => _queue.Tail - _queue.Head <= _resumeMark;

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
                if (_queue.IsClosed) return false; // PostBlocking reports it
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
                    else if (_queue.IsClosed) // acquire: Close sets the bit before it pulses
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
                    : _queue.IsClosed ? EnqueueResult.Closed : EnqueueResult.Full; // acquire: Close sets the bit before it signals
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
            if (result == EnqueueResult.Closed || _queue.IsClosed)
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

    // Workers: the loop, sleeping when idle, running items, reporting failures, busy time.

    private struct WorkerStats
    {
        public long Executed;  // items run, including failed ones; written by the owner only
        public long Failed;
        public long BusyTicks; // timestamp ticks spent awake, completed intervals
        public long BusySince; // timestamp the current awake interval began; 0 while asleep
        public int BusyVersion; // seqlock over BusyTicks + BusySince: odd while EndBusy updates them
    }

    private void WorkerMain(int index, int processor)
    {
        t_current = this;
        if (processor >= 0 && ThreadAffinity.TryPinCurrentThread(processor))
        {
            Interlocked.Increment(ref _pinned);
        }
        ref WorkerStats stats = ref _stats[index].Value;
        var pacer = default(YieldPacer);
        try
        {
            Volatile.Write(ref stats.BusySince, Math.Max(1, _timeProvider.GetTimestamp()));
            pacer.Start();
            while (!_abandon) // volatile read: the shutdown deadline, one read per item (the ScheduledValue idea)
            {
                if (TryDequeue(out var item))
                {
                    Execute(item, ref stats);
                    if (pacer.AfterItem()) Interlocked.Increment(ref _voluntaryYields); // statistics only: orders nothing
                    continue;
                }
                long tail = _queue.TailAndClosedBit;
                if ((tail & ClosedBit) != 0)
                {
                    // Closed: the tail is final. Exit once everything claimed has been taken.
                    if (_queue.Head == (tail & ~ClosedBit)) break;
                    continue;
                }
                if (SpinForWork()) continue;
                EndBusy(ref stats);
                WaitForWork();
                Volatile.Write(ref stats.BusySince, Math.Max(1, _timeProvider.GetTimestamp()));
                pacer.Start();
            }
        }
        finally
        {
            EndBusy(ref stats);
            t_current = null;
            // The last worker out completes Completion: Interlocked orders every worker's exit before it.
            if (Interlocked.Decrement(ref _liveWorkers) == 0)
            {
                DispatcherInstruments.Unregister(this);
                _completion.TrySetResult();
            }
        }
    }

    private void Execute(Action item, ref WorkerStats stats)
    {
        try
        {
            item();
        }
        catch (Exception e)
        {
            // Only this worker writes its counters, so read-add-write needs no Interlocked; the
            // Volatile.Write is a single atomic 64-bit store (no tearing for readers on 32-bit) and
            // pairs with the readers' Volatile.Read. Readers may see a slightly stale count.
            Volatile.Write(ref stats.Failed, stats.Failed + 1);
            ReportFailure(e);
        }
        Volatile.Write(ref stats.Executed, stats.Executed + 1); // as above
    }

    private void ReportFailure(Exception e)
    {
        if (ManalocEventSourceLog.IsEnabled())
        {
            ManalocEventSourceLog.DispatcherItemFailed(_name, Describe(e));
        }
        var handler = _onItemFailed;
        if (handler is null) return;
        try
        {
            handler(e);
        }
        catch (Exception inner)
        {
            // The handler itself threw: log it and keep the worker alive.
            ManalocEventSourceLog.DispatcherItemFailed(_name, "OnItemFailed threw " + Describe(inner));
        }
    }

    /// <summary>"Type: Message", formatted inside a try: a throwing Message getter must not kill the worker.</summary>
    private static string Describe(Exception e)
    {
        string type = e.GetType().FullName ?? e.GetType().Name;
        try
        {
            return $"{type}: {e.Message}";
        }
        catch (Exception)
        {
            return type + " (its Message property threw)";
        }
    }

    private static Diagnostics.ManalocEventSource ManalocEventSourceLog => Diagnostics.ManalocEventSource.Log;

    /// <summary>
    /// Spins, then yields, for a bounded while before sleeping: a wake-up costs a system call on
    /// the producer's side and a scheduling delay on ours, and a flood of tiny items would
    /// otherwise pay both every time the workers momentarily catch up. The yields (after the first
    /// ten busy spins) hand the core to a runnable producer rather than burning it.
    /// </summary>
    private bool SpinForWork()
    {
        SpinWait spin = default;
        for (int i = 0; i < SpinIterations; i++)
        {
            spin.SpinOnce(sleep1Threshold: -1);
            if (_queue.Head != _queue.Tail || _abandon) return true;
        }
        return false;
    }

    /// <summary>SpinWait iterations before a worker sleeps or a producer blocks: 10 busy spins, then yields.</summary>
    private const int SpinIterations = 30;

    /// <summary>
    /// Sleeps until there is work, a shutdown or the deadline. Dekker handshake with TryEnqueue: we
    /// increment _idleWorkers (a full fence) and then re-check head against tail; a producer CASes
    /// the tail (a full fence) and then reads _idleWorkers. If our re-check missed an item, its
    /// producer sees us idle and pulses _workLock — which it can only take once we are inside
    /// Monitor.Wait, so the pulse cannot fall between our check and our wait. Close and the
    /// deadline set their flags before PulseAll under the same lock, so they cannot be missed either.
    /// </summary>
    private void WaitForWork()
    {
        lock (_workLock)
        {
            Interlocked.Increment(ref _idleWorkers); // full fence: before the re-check below
            try
            {
                while (!_abandon)
                {
                    long tail = _queue.TailAndClosedBit;
                    if ((tail & ClosedBit) != 0 || _queue.Head != tail) break;
                    Monitor.Wait(_workLock);
                }
            }
            finally
            {
                Interlocked.Decrement(ref _idleWorkers);
            }
        }
    }

    /// <summary>
    /// Moves the current awake interval into BusyTicks. The two fields change together under a
    /// seqlock (BusyVersion odd meanwhile), so BusyTime never adds the interval twice (new total
    /// plus old start) or drops it (old total, no start). Starting an interval changes one field
    /// only (BusySince from 0), which needs no seqlock.
    /// </summary>
    private void EndBusy(ref WorkerStats stats)
    {
        long since = Volatile.Read(ref stats.BusySince);
        if (since == 0) return;
        long now = _timeProvider.GetTimestamp(); // before the odd version: a throwing clock cannot leave it odd
        Interlocked.Increment(ref stats.BusyVersion); // odd; full fence: a reader that sees either write below sees this first
        Volatile.Write(ref stats.BusyTicks, stats.BusyTicks + Math.Max(0, now - since));
        Volatile.Write(ref stats.BusySince, 0);
        Volatile.Write(ref stats.BusyVersion, stats.BusyVersion + 1); // even; release: after both writes above
        Debug.Assert(stats.BusyTicks >= 0);
        Debug.Assert((stats.BusyVersion & 1) == 0, "the seqlock is released");
    }

    /// <summary>
    /// Time the workers have spent awake, summed over workers. Never decreases from one read to the next (it backs an
    /// observable counter): a worker ending an interval may have read the clock just before a reader did, so a
    /// reading can run a little ahead of the worker's own total; the largest value returned so far is kept and
    /// returned until the total passes it.
    /// </summary>
    private TimeSpan ReadBusyTime()
    {
        long ticks = 0;
        for (int i = 0; i < _stats.Length; i++) ticks += ReadBusyTicks(ref _stats[i].Value);
        long reported = Volatile.Read(ref _busyReported);
        // CAS loop: a maximum that only grows; a lost race retries against the larger value.
        while (ticks > reported)
        {
            long previous = Interlocked.CompareExchange(ref _busyReported, ticks, reported);
            if (previous == reported) break;
            reported = previous;
        }
        return TimeSpan.FromSeconds((double)Math.Max(ticks, reported) / _timeProvider.TimestampFrequency);
    }

    /// <summary>One worker's busy ticks: a seqlock read of BusyTicks and BusySince (see EndBusy), plus the open interval.</summary>
    private long ReadBusyTicks(ref WorkerStats s)
    {
        SpinWait spin = default;
        while (true)
        {
            int version = Volatile.Read(ref s.BusyVersion); // acquire: the field reads below come after it
            if ((version & 1) == 0)
            {
                long since = Volatile.Read(ref s.BusySince);
                long ticks = Volatile.Read(ref s.BusyTicks);
                long open = since != 0 ? Math.Max(0, _timeProvider.GetTimestamp() - since) : 0;
                // Acquire reads above keep this re-read after them: unchanged means no EndBusy overlapped.
                if (Volatile.Read(ref s.BusyVersion) == version) return ticks + open;
            }
            spin.SpinOnce(); // an EndBusy is a few instructions; Sleep(1) fallback if its worker was preempted
        }
    }

    // Shutdown: close the queue, let the workers drain it until the deadline, hand back what did not run.

    /// <summary>
    /// Stops accepting items, lets the workers drain the queue for up to <paramref name="drainTimeout"/>
    /// (on the options' <see cref="TimeProvider"/>), and returns the accepted items that did not run.
    /// </summary>
    /// <param name="drainTimeout">Zero or more, or <see cref="Timeout.InfiniteTimeSpan"/> to run everything. A timeout beyond what a timer can wait (about 49.7 days, e.g. <see cref="TimeSpan.MaxValue"/>) counts as infinite.</param>
    /// <returns>The items that did not run, in queue order; empty when the workers drained everything.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="drainTimeout"/> is negative and not infinite.</exception>
    /// <exception cref="InvalidOperationException">Called from one of this dispatcher's workers.</exception>
    /// <remarks>
    /// At the deadline each worker stops after its current item (at most one per worker may still
    /// be running when the task completes; <see cref="Completion"/> says when they are done).
    /// Producers blocked in <see cref="Post"/> get <see cref="InvalidOperationException"/>. Only the
    /// first call shuts down; later calls return the first call's task.
    /// </remarks>
    public Task<IReadOnlyList<Action>> ShutdownAsync(TimeSpan drainTimeout)
    {
        if (drainTimeout < TimeSpan.Zero && drainTimeout != Timeout.InfiniteTimeSpan)
        {
            ThrowHelper.ThrowBadTimeout(nameof(drainTimeout), drainTimeout);
        }
        if (drainTimeout > MaxDrainTimeout)
        {
            // Task.Delay refuses more than uint.MaxValue - 1 ms; normalised here, before any state
            // changes, so the faulted delay never ends up in the cached shutdown task.
            drainTimeout = Timeout.InfiniteTimeSpan;
        }
        if (t_current == this)
        {
            ThrowHelper.ThrowShutdownFromWorker(_name);
        }
        lock (_shutdownGate)
        {
            return _shutdown ??= ShutdownCoreAsync(drainTimeout);
        }
    }

    /// <summary>Blocking form of <see cref="ShutdownAsync"/>.</summary>
    /// <inheritdoc cref="ShutdownAsync"/>
    public IReadOnlyList<Action> Shutdown(TimeSpan drainTimeout) => ShutdownAsync(drainTimeout).GetAwaiter().GetResult();

    /// <summary>Shuts down and waits until every accepted item has run (<c>Shutdown(Timeout.InfiniteTimeSpan)</c>).</summary>
    /// <remarks>From one of the dispatcher's own workers it only begins the shutdown (waiting would wait for itself).</remarks>
    public void Dispose()
    {
        if (t_current == this)
        {
            Close();
            return;
        }
        Shutdown(Timeout.InfiniteTimeSpan);
    }

    private async Task<IReadOnlyList<Action>> ShutdownCoreAsync(TimeSpan drainTimeout)
    {
        long finalTail = Close();
        if (drainTimeout == Timeout.InfiniteTimeSpan)
        {
            await _completion.Task.ConfigureAwait(false);
        }
        else if (!_completion.Task.IsCompleted)
        {
            using var cancel = new CancellationTokenSource();
            var delay = Task.Delay(drainTimeout, _timeProvider, cancel.Token);
            var first = await Task.WhenAny(_completion.Task, delay).ConfigureAwait(false);
            if (first != _completion.Task)
            {
                _abandon = true; // volatile write (release): workers polling it stop before their next item
                WakeAllWorkers();
            }
            cancel.Cancel();
        }
        // Take what is left. Workers may still claim an item or two in this race; each position
        // goes to exactly one claimer (the head CAS), so an item is either run or returned.
        var notRun = new List<Action>();
        while (_queue.Head < finalTail)
        {
            if (TryDequeue(out var item))
            {
                notRun.Add(item);
            }
        }
        Debug.Assert(_queue.Head == finalTail, "the drain took every accepted position");
        Interlocked.Add(ref _returned, notRun.Count);
        return notRun;
    }

    /// <summary>Sets the closed bit (once) and wakes every sleeper; returns the final tail position.</summary>
    private long Close()
    {
        // From here on every producer's claim fails, so the accepted positions are final.
        long finalTail = _queue.Close();
        WakeProducers();
        WakeAllWorkers();
        return finalTail;
    }
}
