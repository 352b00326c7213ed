namespace Manaloc.Lab.Harness;

/// <summary>
/// Threads an experiment's workload runs on, started the harness's one way: background threads with a name
/// (debuggers, traces, placement), and, where their work is timed, released together once all have started so
/// that thread start-up is never timed.
/// </summary>
/// <remarks>Stateless; each call starts threads of its own.</remarks>
public static class LabThreads
{
    /// <summary>Starts <paramref name="count"/> background threads running body(index), named <paramref name="name"/>-index.</summary>
    /// <param name="count">Threads to start (0 starts none).</param>
    /// <param name="body">Runs on each thread with its index.</param>
    /// <param name="name">The threads' name prefix.</param>
    public static Thread[] Start(int count, Action<int> body, string name)
    {
        ArgumentNullException.ThrowIfNull(body);
        ArgumentOutOfRangeException.ThrowIfNegative(count);
        var threads = new Thread[count];
        for (int i = 0; i < count; i++)
        {
            int index = i;
            threads[i] = new Thread(() => body(index)) { IsBackground = true, Name = $"{name}-{index}" };
            threads[i].Start();
        }
        return threads;
    }

    /// <summary>
    /// Runs body(threadIndex) on <paramref name="threads"/> new threads released together once all have started, then
    /// <paramref name="then"/> (when given) on the calling thread; returns the time from the release to the end of
    /// <paramref name="then"/>, or to the last thread's finish without it. Thread start-up is not timed.
    /// </summary>
    /// <param name="threads">Threads to start.</param>
    /// <param name="body">Runs on each thread with its index.</param>
    /// <param name="then">Runs after every thread has finished, still timed: e.g. completing and draining the work the threads handed on.</param>
    /// <param name="name">The threads' name prefix (debuggers, traces).</param>
    /// <exception cref="InvalidOperationException">A thread's body threw; the first failure is the inner exception.</exception>
    public static TimeSpan RunTogether(int threads, Action<int> body, Action? then = null, string name = "lab-together")
    {
        ArgumentNullException.ThrowIfNull(body);
        ArgumentOutOfRangeException.ThrowIfLessThan(threads, 1);
        using var ready = new CountdownEvent(threads);
        using var go = new ManualResetEventSlim(false);
        Exception? failure = null;
        var started = Start(threads, index =>
        {
            ready.Signal();
            go.Wait();
            try { body(index); }
            catch (Exception e) { Interlocked.CompareExchange(ref failure, e, null); }
        }, name);
        ready.Wait();
        long start = LabClock.Now;
        go.Set();
        foreach (var thread in started) thread.Join();
        // Join orders each thread's write of 'failure' before this read.
        if (failure is not null) throw new InvalidOperationException($"A thread of '{name}' failed: {failure.Message}", failure);
        then?.Invoke();
        return LabClock.Since(start);
    }
}
