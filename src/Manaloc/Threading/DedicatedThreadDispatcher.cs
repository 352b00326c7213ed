using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Manaloc.Threading;

/// <summary>
/// A fixed set of dedicated, named background threads serving one bounded queue of work items,
/// kept apart from the shared <see cref="ThreadPool"/>.
/// </summary>
/// <remarks>
/// <para>
/// Why: "Tradeoffs in High Performance Software" ran a networking library's I/O on a
/// few dedicated threads so that a flood of its requests could not starve the rest of the
/// application behind them in the thread pool's single FIFO queue; and it capped the queue
/// (10,000 items, producers blocking) because a producer faster than its consumer otherwise grows
/// the queue without bound (1.1 GB → 5 MB at equal throughput).
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
/// Memory ordering (the queue is a bounded multi-producer, multi-consumer ring after Dmitry
/// Vyukov's design): each slot carries a sequence number. A producer claims position <c>t</c> by a
/// CAS on the tail, writes the item, then publishes it with a release store of sequence <c>t+1</c>;
/// a consumer claims position <c>h</c> by a CAS on the head once it reads (acquire) sequence
/// <c>h+1</c>, takes the item, and frees the slot with a release store of <c>h + ringSize</c>. So
/// each position is claimed by exactly one producer and one consumer, and an item is read only
/// after it was written. Shutdown sets a closed bit in the tail with one atomic OR: every later
/// claim's CAS fails, so the set of accepted positions is final at that instant, and the drain
/// takes every one of them (waiting for claimed-but-unpublished ones). Sleeping is a Dekker
/// handshake, argued beside <c>WaitForWork</c> and <c>PostBlocking</c>: a sleeper increments a
/// waiter count (a full fence) and then re-checks the queue; the other side changes the queue by a
/// CAS (a full fence) and then reads the count; at least one of them sees the other.
/// </para>
/// <para>Thread safety: every member is safe to call from any thread.</para>
/// </remarks>
public sealed partial class DedicatedThreadDispatcher : IDisposable
{
    private const long ClosedBit = 1L << 62;

    /// <summary>The longest delay a timer (and so <see cref="Task.Delay(TimeSpan, TimeProvider)"/>) accepts; longer drain timeouts are infinite.</summary>
    private static readonly TimeSpan MaxDrainTimeout = TimeSpan.FromMilliseconds(uint.MaxValue - 1);

    [ThreadStatic]
    private static DedicatedThreadDispatcher? t_current; // the dispatcher whose worker this thread is

    private readonly string _name;
    private readonly int _capacity;
    private readonly int _resumeMark;
    private readonly FullQueueMode _fullMode;
    private readonly TimeProvider _timeProvider;
    private readonly Action<Exception>? _onItemFailed;
    private readonly Action<Action>? _onItemDropped;
    private readonly Thread[] _threads;
    private readonly TaskCompletionSource _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly object _shutdownGate = new();
    private Task<IReadOnlyList<Action>>? _shutdown;
    private int _liveWorkers;

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
        _slots = CreateSlots(_capacity);
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
        Register();
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
    public bool IsAcceptingWork => (Volatile.Read(ref _tail.Value) & ClosedBit) == 0;

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
    /// <exception cref="OperationCanceledException">(In the task.) <paramref name="cancellationToken"/> was cancelled before the call or fired while waiting; not queued, and counted in <see cref="RejectedCount"/>.</exception>
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

    /// <summary>The name and the state, for logs and the debugger: <c>DedicatedThreadDispatcher 'orders': running, 4 threads, 12/10000 queued, 981 executed</c>.</summary>
    /// <remarks>A snapshot of counters read without a lock; the state is one of running, shutting down (no more items accepted) and stopped (every worker exited).</remarks>
    public override string ToString()
    {
        string state = IsAcceptingWork ? "running" : _completion.Task.IsCompleted ? "stopped" : "shutting down";
        return $"DedicatedThreadDispatcher '{_name}': {state}, {Plural.Of(ThreadCount, "thread")}, {QueuedCount}/{_capacity} queued, {ExecutedCount} executed";
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
                if (cpu is < 0 or >= MaxAffinityProcessors)
                {
                    ThrowHelper.ThrowArgumentOutOfRange(nameof(options), cpu, $"DispatcherOptions.ProcessorAffinity holds processor numbers from 0 to {MaxAffinityProcessors - 1}.");
                }
            }
        }
        Debug.Assert(options.Capacity > 0);
    }
}
