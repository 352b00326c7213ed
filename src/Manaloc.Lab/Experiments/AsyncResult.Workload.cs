using Manaloc.Lab.Harness;
using Manaloc.Threading;

namespace Manaloc.Lab.Experiments;

/// <summary>The workload: batches of asynchronous Fibonacci jobs and the result handles under test.</summary>
public sealed partial class AsyncResult
{
    /// <summary>Runs operations in windows of <see cref="Window"/> and waits for each window to complete.</summary>
    private sealed class Batch : IDisposable
    {
        public static readonly AsyncCallback Callback = OnCompleted;
        private readonly EconomicResetEvent _done = new();
        private int _remaining;
        public long Sink;

        public void Run(long operations, Action<int> start)
        {
            for (long started = 0; started < operations;)
            {
                int count = (int)Math.Min(Window, operations - started);
                Volatile.Write(ref _remaining, count); // release: published before the first operation is queued
                for (int k = 0; k < count; k++) start(k);
                _done.Wait();
                started += count;
            }
        }

        public void OneCompleted(long value)
        {
            Interlocked.Add(ref Sink, value);
            if (Interlocked.Decrement(ref _remaining) == 0) _done.Set(); // the last completion of the window wakes the runner
        }

        private static void OnCompleted(IAsyncResult ar)
        {
            var batch = (Batch)ar.AsyncState!;
            switch (ar)
            {
                case EagerAsyncResult e: batch.OneCompleted(e.End()); e.Dispose(); break;
                case LazyAsyncResult<long> l: batch.OneCompleted(l.End()); l.Dispose(); break;
                case LockedAsyncResult k: batch.OneCompleted(k.End()); k.Dispose(); break;
            }
        }

        public void Dispose() => _done.Dispose();
    }

    /// <summary>Computes F(size) on a pool thread and completes the result it carries.</summary>
    private sealed class FibJob(object result, int size) : IThreadPoolWorkItem
    {
        public void Execute()
        {
            long value = Fib(size);
            switch (result)
            {
                case EagerAsyncResult e: e.SetResult(value); break;
                case LazyAsyncResult<long> l: l.SetResult(value); break;
                case LockedAsyncResult k: k.SetResult(value); break;
            }
        }
    }

    /// <summary>One reusable source and its work item; nothing is allocated per operation.</summary>
    private sealed class ValueTaskJob : IThreadPoolWorkItem
    {
        private readonly ReusableValueTaskSource<long> _source = new();
        private readonly Batch _batch;
        private readonly Action _continuation;
        private int _size;

        public ValueTaskJob(Batch batch)
        {
            _batch = batch;
            _continuation = () => _batch.OneCompleted(_source.GetResult(_source.Version));
        }

        public void Start(int size)
        {
            _size = size;
            _source.Reset(); // the previous operation was consumed before its window completed
            _source.Task.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(_continuation);
            ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
        }

        public void Execute() => _source.SetResult(Fib(_size)); // runs the continuation inline
    }

    /// <summary>The classic APM result: its ManualResetEvent is created with it, used or not.</summary>
    private sealed class EagerAsyncResult(AsyncCallback callback, object state) : IAsyncResult, IDisposable
    {
        private readonly ManualResetEvent _handle = new(false);
        private volatile bool _completed;
        private long _result;

        public object AsyncState => state;
        public WaitHandle AsyncWaitHandle => _handle;
        public bool CompletedSynchronously => false;
        public bool IsCompleted => _completed;

        public void SetResult(long value)
        {
            _result = value;
            _completed = true;
            _handle.Set();
            callback(this);
        }

        public long End()
        {
            if (!_completed) _handle.WaitOne();
            return _result;
        }

        public void Dispose() => _handle.Dispose();
    }

    /// <summary>A lazy handle guarded by a lock on the result itself (the article's simpler alternative; no extra object).</summary>
    private sealed class LockedAsyncResult(AsyncCallback callback, object state) : IAsyncResult, IDisposable
    {
        private ManualResetEvent? _handle;
        private bool _completed;
        private long _result;

        public object AsyncState => state;
        public bool CompletedSynchronously => false;
        public bool IsCompleted { get { lock (this) return _completed; } }

        public WaitHandle AsyncWaitHandle
        {
            get { lock (this) return _handle ??= new ManualResetEvent(_completed); }
        }

        public void SetResult(long value)
        {
            _result = value;
            lock (this)
            {
                _completed = true;
                _handle?.Set();
            }
            callback(this);
        }

        public long End()
        {
            if (!IsCompleted) AsyncWaitHandle.WaitOne();
            return _result;
        }

        public void Dispose()
        {
            lock (this) _handle?.Dispose();
        }
    }
}
