using System.Diagnostics;
using System.Runtime.ExceptionServices;

namespace Manaloc.Threading;

// Memory-ordering argument
// ------------------------
// The race to survive: thread A asks for AsyncWaitHandle while thread B completes. Completion
// is "write _status = Completed; read _handle"; handle creation is "publish _handle; read
// _status". Each side's write is an Interlocked operation (a full fence), so neither read can
// move before its own side's write (the store->load reordering a plain or volatile store would
// allow). Hence at least one side sees the other's write:
//   * B sees the handle: B sets it.
//   * A sees Completed: A sets the handle it published.
//   * both: the handle is set twice, which is harmless.
// A thread that loses the creation race disposes its handle and returns the winner's, which the
// winner itself sets if it saw Completed, or B sets because B will see it. The result fields are
// written before B's Interlocked write of Completed and read after an acquire of Completed (or
// after the handle's wait, which B signals later still), so readers see them whole.

/// <summary>
/// An <see cref="IAsyncResult"/> whose wait handle is created only when someone asks for it,
/// without a lock: completions consumed by callback, polling or an already-completed End never
/// allocate a kernel-backed event.
/// </summary>
/// <typeparam name="TResult">The operation's result.</typeparam>
/// <remarks>
/// <para>Why: the classic APM result allocates a <see cref="ManualResetEvent"/> per operation
/// (a handle, a finalizable safe handle) although most callers use the callback and never touch
/// <see cref="AsyncWaitHandle"/>. For cheap operations that allocation dominates.</para>
/// <para>Race safety: a handle requested while completion happens is always signalled; a handle
/// created by a thread that lost the creation race is disposed at once (the argument is in the
/// source).</para>
/// <para>Thread safety: all members may be used from any thread. The operation completes once
/// (<see cref="SetResult"/> or <see cref="SetException"/>; a second completion throws
/// <see cref="InvalidOperationException"/>). <see cref="Dispose"/> releases the handle if one
/// was created; call it once nobody waits on the handle any more.</para>
/// <para>For new code, <see cref="ReusableValueTaskSource{TResult}"/> is the modern form of the
/// same idea: no handle at all and no allocation per operation.</para>
/// </remarks>
public sealed class LazyAsyncResult<TResult> : IAsyncResult, IDisposable
{
    private const int Pending = 0;
    private const int Completing = 1;
    private const int Completed = 2;

    private static long s_lostHandleRaces;

    private readonly AsyncCallback? _callback;
    private readonly object? _asyncState;
    private ManualResetEvent? _handle;
    private int _status;
    private bool _completedSynchronously;
    private bool _disposed;
    private TResult? _result;
    private ExceptionDispatchInfo? _error;

    /// <summary>Creates a pending result.</summary>
    /// <param name="callback">Invoked once, on the completing thread, after completion; may be null.</param>
    /// <param name="asyncState">The caller's state, returned by <see cref="AsyncState"/>.</param>
    public LazyAsyncResult(AsyncCallback? callback, object? asyncState)
    {
        _callback = callback;
        _asyncState = asyncState;
    }

    /// <summary>How many handles, over the process, were created and discarded in a lost creation race (tests, diagnostics).</summary>
    internal static long LostHandleRaces => Interlocked.Read(ref s_lostHandleRaces); // statistics: orders nothing

    /// <inheritdoc/>
    public object? AsyncState => _asyncState;

    /// <inheritdoc/>
    /// <remarks>Created on first use; signalled if the operation has completed or when it does.</remarks>
    /// <exception cref="ObjectDisposedException">The result was disposed.</exception>
    public WaitHandle AsyncWaitHandle => Volatile.Read(ref _handle) ?? CreateHandle(); // acquire: pairs with the publishing CAS

    /// <inheritdoc/>
    public bool CompletedSynchronously => IsCompleted && _completedSynchronously;

    /// <inheritdoc/>
    public bool IsCompleted => Volatile.Read(ref _status) == Completed; // acquire: the result fields are visible after it

    /// <summary>True once a wait handle has been created (tests and diagnostics).</summary>
    public bool IsWaitHandleCreated => Volatile.Read(ref _handle) is not null; // snapshot

    /// <summary>Completes the operation with a result: signals the handle if any, then invokes the callback.</summary>
    /// <param name="result">The result.</param>
    /// <param name="completedSynchronously">True if the operation finished on the thread that started it.</param>
    /// <exception cref="InvalidOperationException">The operation has already completed.</exception>
    public void SetResult(TResult result, bool completedSynchronously = false)
    {
        BeginCompletion();
        _result = result;
        FinishCompletion(completedSynchronously);
    }

    /// <summary>Completes the operation with an error, rethrown by <see cref="End"/>.</summary>
    /// <param name="error">The error.</param>
    /// <param name="completedSynchronously">True if the operation finished on the thread that started it.</param>
    /// <exception cref="ArgumentNullException"><paramref name="error"/> is null.</exception>
    /// <exception cref="InvalidOperationException">The operation has already completed.</exception>
    public void SetException(Exception error, bool completedSynchronously = false)
    {
        if (error is null) ThrowHelper.ThrowArgumentNull(nameof(error));
        BeginCompletion();
        _error = ExceptionDispatchInfo.Capture(error);
        FinishCompletion(completedSynchronously);
    }

    /// <summary>Waits for completion (the handle is created only if the operation is still running) and returns the result.</summary>
    /// <returns>The result.</returns>
    /// <exception cref="Exception">The error the operation completed with, rethrown with its original stack.</exception>
    public TResult End()
    {
        if (!IsCompleted)
        {
            var spinner = new SpinWait();
            while (!IsCompleted && !spinner.NextSpinWillYield) spinner.SpinOnce();
            if (!IsCompleted) AsyncWaitHandle.WaitOne();
        }
        Debug.Assert(IsCompleted, "The handle is signalled only after Completed is published.");
        _error?.Throw();
        return _result!;
    }

    /// <summary>Disposes the wait handle if one was created; later requests for it throw.</summary>
    public void Dispose()
    {
        Volatile.Write(ref _disposed, true); // release: later CreateHandle calls see it
        Interlocked.Exchange(ref _handle, null)?.Dispose(); // full fence: exactly one disposer
    }

    private void BeginCompletion()
    {
        // Pending→Completing: exactly one completer; it writes the result before publishing Completed.
        if (Interlocked.CompareExchange(ref _status, Completing, Pending) != Pending) ThrowHelper.ThrowAlreadyCompleted();
    }

    private void FinishCompletion(bool completedSynchronously)
    {
        _completedSynchronously = completedSynchronously;
        // Full fence: Completed (and the result) are published before _handle is read below.
        Interlocked.Exchange(ref _status, Completed);
        var handle = Volatile.Read(ref _handle); // cannot move above the Exchange
        if (handle is not null) SignalQuietly(handle);
        _callback?.Invoke(this);
    }

    private ManualResetEvent CreateHandle()
    {
        if (Volatile.Read(ref _disposed)) ThrowHelper.ThrowObjectDisposed(this); // acquire: pairs with Dispose
        var created = new ManualResetEvent(false);
        // Full fence: the handle is published before _status is read below.
        var winner = Interlocked.CompareExchange(ref _handle, created, null);
        if (winner is not null)
        {
            created.Dispose(); // lost the race: the winner (or the completer) signals the published handle
            Interlocked.Increment(ref s_lostHandleRaces); // statistics only
            return winner;
        }
        if (Volatile.Read(ref _status) == Completed) SignalQuietly(created); // completed before it saw our handle
        return created;
    }

    private static void SignalQuietly(ManualResetEvent handle)
    {
        try
        {
            handle.Set();
        }
        catch (ObjectDisposedException)
        {
            // Disposed concurrently by Dispose: nobody may wait on it any more.
        }
    }
}
