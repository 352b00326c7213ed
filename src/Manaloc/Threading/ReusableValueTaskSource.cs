using System.Threading.Tasks.Sources;

namespace Manaloc.Threading;

/// <summary>
/// A reusable, allocation-free source of <see cref="ValueTask{TResult}"/>: one instance serves one
/// operation at a time, then <see cref="Reset"/> readies it for the next. The modern form of the
/// lazy async result: no wait handle, no per-operation object.
/// </summary>
/// <typeparam name="TResult">The operation's result.</typeparam>
/// <remarks>
/// <para>Why: an operation that completes often and cheaply should not allocate a Task (or an
/// IAsyncResult and its event) each time. Built on <see cref="ManualResetValueTaskSourceCore{TResult}"/>,
/// which versions each use so a stale <see cref="ValueTask{TResult}"/> is detected rather than
/// silently reading the next operation's result.</para>
/// <para>Protocol, per operation: the owner calls <see cref="Reset"/> (not needed the first time),
/// hands out <see cref="Task"/>, and later calls <see cref="SetResult"/> or
/// <see cref="SetException"/> exactly once; the consumer awaits (or reads) the value task exactly
/// once, like any <see cref="ValueTask{TResult}"/>. The owner may reset only after that.</para>
/// <para>Thread safety: completion may happen on any thread, concurrently with the consumer's
/// await. Reset, and handing out the task, belong to the owner and must not race with completion
/// or consumption of the same operation. Misuse (completing twice, awaiting a task from an earlier
/// operation) throws <see cref="InvalidOperationException"/>.</para>
/// </remarks>
public sealed class ReusableValueTaskSource<TResult> : IValueTaskSource<TResult>, IValueTaskSource
{
    private ManualResetValueTaskSourceCore<TResult> _core;

    /// <summary>Creates a source ready for its first operation.</summary>
    /// <param name="runContinuationsAsynchronously">True to queue continuations to the thread pool
    /// instead of running them inline on the completing thread.</param>
    public ReusableValueTaskSource(bool runContinuationsAsynchronously = false)
        => _core.RunContinuationsAsynchronously = runContinuationsAsynchronously;

    /// <summary>The current operation's version; value tasks carry it and are checked against it.</summary>
    public short Version => _core.Version;

    /// <summary>The value task of the current operation.</summary>
    public ValueTask<TResult> Task => new(this, _core.Version);

    /// <summary>The value task of the current operation, without its result.</summary>
    public ValueTask TaskWithoutResult => new(this, _core.Version);

    /// <summary>True once the current operation has completed.</summary>
    public bool IsCompleted => _core.GetStatus(_core.Version) != ValueTaskSourceStatus.Pending;

    /// <summary>Completes the current operation with a result.</summary>
    /// <exception cref="InvalidOperationException">The operation has already completed.</exception>
    public void SetResult(TResult result) => _core.SetResult(result);

    /// <summary>Completes the current operation with an error.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="error"/> is null.</exception>
    /// <exception cref="InvalidOperationException">The operation has already completed.</exception>
    public void SetException(Exception error)
    {
        if (error is null) ThrowHelper.ThrowArgumentNull(nameof(error));
        _core.SetException(error);
    }

    /// <summary>Readies the source for the next operation; value tasks of the previous one become invalid.</summary>
    public void Reset() => _core.Reset();

    /// <inheritdoc/>
    public TResult GetResult(short token) => _core.GetResult(token);

    /// <inheritdoc/>
    public ValueTaskSourceStatus GetStatus(short token) => _core.GetStatus(token);

    /// <inheritdoc/>
    public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
        => _core.OnCompleted(continuation, state, token, flags);

    /// <inheritdoc/>
    void IValueTaskSource.GetResult(short token) => _core.GetResult(token);
}
