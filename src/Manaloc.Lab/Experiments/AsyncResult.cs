using Manaloc.Threading;

namespace Manaloc.Lab.Experiments;

/// <summary>
/// Seed 001, "Lock free code is hard" (FastAsyncResult): an asynchronous Fibonacci whose
/// IAsyncResult created its wait handle eagerly ran 177 ms at size 1; creating it lazily, without a
/// lock, ran 62 ms (+185%), the gain fading as the computation grows (size 15: +5%). Today: the
/// eager handle, the lazy lock-free LazyAsyncResult, a lazy lock-based result and the reusable
/// ValueTask source, over the same sizes. Each operation is queued to the thread pool, computes
/// F(size) recursively and completes through its callback (or continuation); 32 are in flight.
/// </summary>
public sealed class AsyncResult() : Experiment(
    "async-result", "Lock free code is hard (FastAsyncResult) (seed 001)",
    "Async Fibonacci per IAsyncResult kind: eager wait handle, lazy lock-free, lazy locked, reusable ValueTask source.",
    [Eager, Lazy, Locked, ValueTaskSource], Eager, quickSeconds: 2.5, quickLaunches: 2, sweepParameter: "size")
{
    private const string Eager = "eager handle", Lazy = "LazyAsyncResult", Locked = "lazy, locked", ValueTaskSource = "ReusableValueTaskSource";
    private const int Window = 32;

    /// <inheritdoc/>
    public override Claim Claim => new("Async Fibonacci, size 1: eager handle 177 ms → lazy lock-free handle 62 ms (+185%); size 15: +5%", 177.0 / 62, SizeOne);
    /// <inheritdoc/>
    public override IReadOnlyList<Target> Targets => [Target.AtLeast(SizeOne, 2)];

    private static readonly Metric SizeOne = Metric.TimesBetter(
        "LazyAsyncResult vs eager handle, size 1", Lazy, Eager, m => m.Parameters.Is("size", 1));
    /// <inheritdoc/>
    public override Headline Headline => new(
        Metric.TimesBetter("LazyAsyncResult vs an IAsyncResult with an eager wait handle, async Fibonacci size 1 (times as fast)", Lazy, Eager, m => m.Parameters.Is("size", 1)),
        Metric.TimesBetter("ReusableValueTaskSource vs the eager handle, size 1 (times as fast)", ValueTaskSource, Eager, m => m.Parameters.Is("size", 1)));

    /// <inheritdoc/>
    public override IReadOnlyList<ParameterSpec> DescribeParameters(RunSettings settings) =>
    [
        new("size", "n of the Fibonacci number F(n) each operation computes recursively (the article's 'size')", Sizes(settings).Select(s => s.ToString(System.Globalization.CultureInfo.InvariantCulture)).ToArray()),
    ];

    private static int[] Sizes(RunSettings settings)
        => settings.IsSmoke ? [1, 8] : settings.IsQuick ? [1, 15] : [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15];

    /// <inheritdoc/>
    public override void Run(ExperimentContext context)
    {
        using var batch = new Batch();
        var slots = Enumerable.Range(0, Window).Select(_ => new ValueTaskJob(batch)).ToArray();
        foreach (int size in Sizes(context.Settings))
        {
            var p = Parameters.Of(("size", size));
            // Side by side in interleaved rounds: every window waits on pool threads, so a stretch of outside load that fell
            // on one variant's samples alone would decide the ratio (one launch on a loaded machine once found the eager
            // handle as fast as the lazy one).
            context.Compare(
            [
                Cell(context, Eager, p, n => batch.Run(n, k => Start(new EagerAsyncResult(Batch.Callback, batch), size))),
                Cell(context, Lazy, p, n => batch.Run(n, k => Start(new LazyAsyncResult<long>(Batch.Callback, batch), size))),
                Cell(context, Locked, p, n => batch.Run(n, k => Start(new LockedAsyncResult(Batch.Callback, batch), size))),
                Cell(context, ValueTaskSource, p, n => batch.Run(n, k => slots[k].Start(size))),
            ]);
        }
        context.Note($"ns per operation: begin, queue to the thread pool, compute F(size), complete, callback and End; {Window} operations in flight. The ValueTask source reuses {Window} sources and allocates nothing per operation.");
    }

    /// <summary>
    /// A cell with an operation count from a pilot (at least 2,048 operations, grown until a run
    /// takes 2 ms, then the best of two runs): every window waits on pool threads, and on a loaded machine one late wake-up
    /// during the harness's calibration can leave a sample of one window, timing the wake-up.
    /// </summary>
    private static (string, Parameters, Action<long>, long?) Cell(ExperimentContext context, string variant, Parameters parameters, Action<long> body)
    {
        // A first count large enough that one late pool wake-up cannot dominate the pilot.
        double nsPerOp = Pilot.NsPerOp(body, startOperations: Window * 64L, minimum: TimeSpan.FromMilliseconds(2));
        return (variant, parameters, body, Math.Max(Window, Pilot.OperationsPerSample(context.Settings, nsPerOp)));
    }

    private static void Start(object result, int size) => ThreadPool.UnsafeQueueUserWorkItem(new FibJob(result, size), preferLocal: false);

    private static long Fib(int n) => n < 2 ? n : Fib(n - 1) + Fib(n - 2);

    // The workload: batches of asynchronous Fibonacci jobs and the result handles under test.
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
