using BenchmarkDotNet.Attributes;
using Manaloc.Threading;

namespace Manaloc.Benchmarks;

/// <summary>
/// Create, complete and end one asynchronous result on one thread (no thread pool, so only the
/// result's own cost shows). Anchor: a result whose ManualResetEvent is created eagerly.
/// </summary>
[MemoryDiagnoser]
public class AsyncResultBenchmarks
{
    private readonly ReusableValueTaskSource<long> _source = new();

    /// <summary>Anchor: the classic APM shape, an event per operation.</summary>
    [Benchmark(Baseline = true)]
    public long EagerHandle()
    {
        using var handle = new ManualResetEvent(false);
        handle.Set();
        return 1;
    }

    /// <summary>Ours: the handle is never created when completion is consumed by End.</summary>
    [Benchmark]
    public long LazyAsyncResultEnd()
    {
        var result = new LazyAsyncResult<long>(null, null);
        result.SetResult(1);
        return result.End();
    }

    /// <summary>Ours, when a caller does ask for the handle.</summary>
    [Benchmark]
    public bool LazyAsyncResultWithHandle()
    {
        using var result = new LazyAsyncResult<long>(null, null);
        result.SetResult(1);
        return result.AsyncWaitHandle.WaitOne(0);
    }

    /// <summary>Ours, the modern form: a reused ValueTask source, nothing allocated.</summary>
    [Benchmark]
    public long ReusableValueTaskSource()
    {
        _source.Reset();
        var task = _source.Task;
        _source.SetResult(1);
        return task.Result;
    }

    /// <summary>The runtime's default: a completed Task per operation.</summary>
    [Benchmark]
    public long TaskCompletionSource()
    {
        var tcs = new TaskCompletionSource<long>();
        tcs.SetResult(1);
        return tcs.Task.Result;
    }
}
