using Manaloc.Concurrency.Tests.Systematic;
using Monitor = System.Threading.Monitor;

namespace Manaloc.Concurrency.Tests.Mutants;

/// <summary>
/// A one-worker dispatcher (a locked queue, the worker sleeps on Monitor.Wait), with one deliberate
/// bug: TryPost checks the closed flag before taking the queue's lock, where the real dispatcher
/// closes and enqueues on the same word (its tail's closed bit). A post that passes the check
/// before Shutdown closes and enqueues after Shutdown drained is accepted but never run nor handed back.
/// </summary>
internal sealed class CheckThenEnqueueDispatcher : IDispatcherUnderTest
{
    private readonly Queue<Action> _queue = new();
    private readonly object _lock = new();
    private readonly Thread _worker;
    private bool _closed;
    private bool _stopping;

    public CheckThenEnqueueDispatcher()
    {
        _worker = new Thread(Work);
        _worker.Start();
    }

    public bool TryPost(Action item)
    {
        if (Volatile.Read(ref _closed)) return false; // BUG: checked outside the lock that Shutdown drains under
        lock (_lock)
        {
            _queue.Enqueue(item);
            Monitor.Pulse(_lock);
        }
        return true;
    }

    public IReadOnlyList<Action> Shutdown()
    {
        Volatile.Write(ref _closed, true);
        lock (_lock)
        {
            var left = _queue.ToArray();
            _queue.Clear();
            _stopping = true;
            Monitor.Pulse(_lock);
            return left;
        }
    }

    public void WaitForWorkers() => _worker.Join();

    private void Work()
    {
        while (true)
        {
            Action item;
            lock (_lock)
            {
                while (_queue.Count == 0 && !_stopping) Monitor.Wait(_lock);
                if (_queue.Count == 0) return;
                item = _queue.Dequeue();
            }
            item();
        }
    }
}
