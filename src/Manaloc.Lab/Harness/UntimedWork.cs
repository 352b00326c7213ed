using System.Runtime;

namespace Manaloc.Lab.Harness;

/// <summary>
/// Untimed work a parent runs only while its child is in an untimed window (<see cref="ExperimentContext.Untimed"/>):
/// items handed out in order to threads of their own, which run while the work is open and park at their next
/// <see cref="Checkpoint"/> once it is closed. <see cref="ExperimentContext.RunChild"/> opens it as the child enters a
/// window and closes it, waiting until every thread is parked, before the child may time anything again; so on a
/// machine of a few cores the parent's work takes the cores a child's filling, settling collections and set-up leave
/// idle, and never shares the machine with a timed sample. The threads run at the lowest priority (Linux), so they take
/// the idle cores and not the child's. <see cref="Finish"/> runs what is left once the children are done.
/// </summary>
/// <remarks>
/// Invariant: while the work is closed, every thread is parked in <see cref="Checkpoint"/>, not started, or done. Every
/// field is read and written under <c>_gate</c> (a monitor: its enter and exit order the writes), except
/// <c>_open</c>'s lock-free read on <see cref="Checkpoint"/>'s fast path, which only decides whether to take the lock:
/// a stale true there lets a thread run on until its next checkpoint, and <see cref="Close"/> waits for that thread
/// to count itself parked under the lock. For the work's life the process's collections are blocking
/// (<see cref="GCLatencyMode.Batch"/>), so no background collection of the work's garbage runs on while it is closed.
/// </remarks>
public sealed class UntimedWork : IDisposable
{
    private readonly object _gate = new();
    private readonly Action<int, Action> _item;
    private readonly int _items;
    private readonly Thread[] _threads;
    private readonly CancellationToken _cancellation;
    private volatile bool _open;
    private bool _started, _disposed;
    private int _next, _running, _doneItems;
    private Exception? _failure;

    /// <summary>Prepares <paramref name="items"/> items, run as <paramref name="item"/>(index, checkpoint) on
    /// <paramref name="threads"/> threads once the work is first opened; an item calls checkpoint often (every
    /// fraction of a millisecond of work), where it parks while the work is closed.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="items"/> is negative or <paramref name="threads"/> below 1.</exception>
    public UntimedWork(int items, Action<int, Action> item, int threads, CancellationToken cancellation = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(items);
        ArgumentOutOfRangeException.ThrowIfLessThan(threads, 1);
        ArgumentNullException.ThrowIfNull(item);
        (_items, _item, _cancellation) = (items, item, cancellation);
        _threads = new Thread[threads];
        for (int t = 0; t < threads; t++) _threads[t] = new Thread(Work) { IsBackground = true, Name = $"lab-untimed-{t}" };
        BlockingCollections.Enter();
    }

    /// <summary>Items done so far (for tests and progress).</summary>
    public int Done { get { lock (_gate) return _doneItems; } }

    /// <summary>Lets the threads run (starting them the first time).</summary>
    /// <exception cref="ObjectDisposedException">The work was disposed.</exception>
    public void Open()
    {
        lock (_gate)
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
            _open = true;
            if (!_started)
            {
                _started = true;
                _running = _threads.Length;
                foreach (var thread in _threads) thread.Start();
            }
            Monitor.PulseAll(_gate);
        }
    }

    /// <summary>Stops the threads at their next checkpoint and returns once every one is parked or done.</summary>
    public void Close()
    {
        lock (_gate)
        {
            _open = false;
            while (_running > 0) Monitor.Wait(_gate);
        }
    }

    /// <summary>The pause point items call: returns at once while the work is open, else parks until it is opened.</summary>
    public void Checkpoint()
    {
        if (_open) return;
        lock (_gate)
        {
            if (_open) return;
            _running--;
            Monitor.PulseAll(_gate);
            while (!_open) Monitor.Wait(_gate);
            _running++;
        }
    }

    /// <summary>Opens the work for good and waits until every item is done; rethrows the first item's failure.</summary>
    /// <exception cref="AggregateException">An item threw.</exception>
    public void Finish()
    {
        Open();
        // The caller's thread takes items too, at its own priority: what is left then goes on at normal speed where
        // other processes compete for the cores, rather than at the work threads' lowest priority alone. Open for good,
        // so it needs no pause point.
        RunItems(static () => { });
        foreach (var thread in _threads) thread.Join();
        lock (_gate)
        {
            if (_failure is not null) throw new AggregateException("Untimed work failed.", _failure);
        }
    }

    private void Work()
    {
        try
        {
            // On Linux the threads take only the time the child's own threads leave: at the lowest priority they yield to
            // every other thread of the lab's (a window's fill on both cores goes at its own pace), and run on a core
            // its single-threaded phases leave idle. Elsewhere they run at normal priority.
            if (OperatingSystem.IsLinux()) Platform.LabNative.SetCallingThreadNice(Platform.LabNative.LowestPriority);
            RunItems(Checkpoint);
        }
        finally
        {
            lock (_gate)
            {
                _running--;
                Monitor.PulseAll(_gate);
            }
        }
    }

    /// <summary>Runs items in order until none is left, one fails or the run is stopped; a failure is kept for <see cref="Finish"/>.</summary>
    private void RunItems(Action checkpoint)
    {
        try
        {
            while (true)
            {
                checkpoint();
                int index;
                lock (_gate)
                {
                    if (_failure is not null || _next == _items || _cancellation.IsCancellationRequested) return;
                    index = _next++;
                }
                _item(index, checkpoint);
                lock (_gate) _doneItems++;
            }
        }
        catch (Exception e)
        {
            lock (_gate) _failure ??= e;
        }
    }

    /// <summary>Closes the work (a thread still running an item is left parked: a background thread) and gives the process's collection mode back.</summary>
    public void Dispose()
    {
        lock (_gate)
        {
            if (_disposed) return;
            _disposed = true;
        }
        Close();
        BlockingCollections.Exit();
    }

    /// <summary>
    /// The process's collections made blocking while any work lives (counted, so two works' lives may overlap), and the
    /// mode before given back after the last. A no-GC region in progress elsewhere in the process (the lab's tests run
    /// side by side) refuses the change; no collection starts in it, and the mode stays as it is.
    /// </summary>
    private static class BlockingCollections
    {
        private static readonly object Gate = new();
        private static int s_works;
        private static GCLatencyMode s_before;
        private static bool s_changed;

        public static void Enter()
        {
            lock (Gate)
            {
                if (s_works++ > 0) return;
                s_before = GCSettings.LatencyMode;
                s_changed = TrySet(GCLatencyMode.Batch);
            }
        }

        public static void Exit()
        {
            lock (Gate)
            {
                if (--s_works > 0 || !s_changed) return;
                if (GCSettings.LatencyMode == GCLatencyMode.Batch) TrySet(s_before);
                s_changed = false;
            }
        }

        private static bool TrySet(GCLatencyMode mode)
        {
            try
            {
                GCSettings.LatencyMode = mode;
                return true;
            }
            catch (InvalidOperationException)
            {
                return false;
            }
        }
    }
}
