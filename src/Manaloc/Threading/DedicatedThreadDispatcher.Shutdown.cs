using System.Diagnostics;

namespace Manaloc.Threading;

// Shutdown: close the queue, let the workers drain it until the deadline, hand back what did not run.
public sealed partial class DedicatedThreadDispatcher
{
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
        while (Volatile.Read(ref _head.Value) < finalTail)
        {
            if (TryDequeue(out var item))
            {
                notRun.Add(item);
            }
        }
        Debug.Assert(Volatile.Read(ref _head.Value) == finalTail, "the drain took every accepted position");
        Interlocked.Add(ref _returned, notRun.Count);
        return notRun;
    }

    /// <summary>Sets the closed bit (once) and wakes every sleeper; returns the final tail position.</summary>
    private long Close()
    {
        // Atomic OR: from here on every producer's claim CAS fails, so the accepted positions are final.
        long finalTail = Interlocked.Or(ref _tail.Value, ClosedBit) & ~ClosedBit;
        Debug.Assert(Volatile.Read(ref _head.Value) <= finalTail, "the head never passes the tail");
        WakeProducers();
        WakeAllWorkers();
        return finalTail;
    }
}
