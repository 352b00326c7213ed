using System.Diagnostics;
using System.Net;

namespace Manaloc.Lab.RequestServer;

/// <summary>What a <see cref="ListeningProcess"/> left behind when it stopped.</summary>
/// <param name="ExitCode">The process's exit code.</param>
/// <param name="Output">The lines it wrote to standard output after the line that said where it listens.</param>
/// <param name="Errors">What it wrote to standard error, trimmed.</param>
public sealed record StoppedProcess(int ExitCode, IReadOnlyList<string> Output, string Errors);

/// <summary>
/// A server in a child process that says on standard output where it listens and stops when its
/// standard input closes. The lab runs each server build this way (the request server's
/// <c>serve --stop-on-eof</c>, the HttpApi service's <c>--stop-on-stdin-eof</c>), so the build's GC,
/// allocation and memory figures are its own.
/// </summary>
/// <remarks>
/// A child that exits, or does not say where it listens in time, is killed with its tree and the
/// start throws with what it wrote to standard error. <see cref="Dispose"/> kills a child that is
/// still running, so a failed measurement never leaves a server behind.
/// </remarks>
public sealed class ListeningProcess : IDisposable
{
    private readonly Process _process;
    private readonly Task<string> _errors;
    // Guards _lines, _waiters and _ended: the reader adds lines on its own thread while callers wait for them.
    private readonly object _gate = new();
    private readonly List<string> _lines = [];
    private readonly List<(Func<string, bool> Match, TaskCompletionSource<string> Seen)> _waiters = [];
    private bool _ended;
    // Read from the moment the child listens, so a chatty child never blocks on a full pipe.
    private readonly Task<List<string>> _output;

    private ListeningProcess(Process process, IPEndPoint endPoint, Task<string> errors)
    {
        _process = process;
        EndPoint = endPoint;
        _errors = errors;
        _output = ReadLinesAsync(process.StandardOutput);
    }

    /// <summary>Where the child listens.</summary>
    public IPEndPoint EndPoint { get; }

    /// <summary>The child's process id.</summary>
    public int Id => _process.Id;

    /// <summary>Starts the child and waits for the line that says where it listens.</summary>
    /// <param name="start">The program, its arguments and environment; its redirection is set here.</param>
    /// <param name="name">What the child is, for messages (e.g. "kestrel server").</param>
    /// <param name="listening">Reads a line of the child's output: the endpoint when the line says where it listens, otherwise <see langword="null"/>.</param>
    /// <param name="timeout">How long the start may take.</param>
    /// <exception cref="InvalidOperationException">The child did not start, exited, or did not say where it listens in time (it is killed).</exception>
    public static async Task<ListeningProcess> StartAsync(ProcessStartInfo start, string name, Func<string, IPEndPoint?> listening, TimeSpan timeout)
    {
        ArgumentNullException.ThrowIfNull(start);
        ArgumentNullException.ThrowIfNull(listening);
        start.RedirectStandardInput = true;
        start.RedirectStandardOutput = true;
        start.RedirectStandardError = true;
        start.UseShellExecute = false;
        var process = Process.Start(start) ?? throw new InvalidOperationException($"The {name} process did not start.");
        var errors = process.StandardError.ReadToEndAsync();
        using var cts = new CancellationTokenSource(timeout);
        try
        {
            while (await process.StandardOutput.ReadLineAsync(cts.Token).ConfigureAwait(false) is { } line)
            {
                if (listening(line) is { } endPoint) return new ListeningProcess(process, endPoint, errors);
            }
        }
        catch (OperationCanceledException)
        {
            // fall through: killed below
        }
        Kill(process);
        string written = await errors.ConfigureAwait(false);
        process.Dispose();
        throw new InvalidOperationException($"The {name} did not start listening within {timeout.TotalSeconds:0} s. {written.Trim()}");
    }

    /// <summary>
    /// The first line of the child's output (after the line that said where it listens) that <paramref name="match"/>
    /// accepts: one already written, or the next one that is. For an event the child announces on a line of its own,
    /// so the caller waits for the event rather than for a time it is expected within.
    /// </summary>
    /// <param name="match">Tells the line waited for; called on the reader's thread or the caller's, under a lock (keep it short).</param>
    /// <param name="cancellation">Gives up the wait (the task is then canceled).</param>
    /// <exception cref="InvalidOperationException">(In the task.) The child's output ended without such a line.</exception>
    public Task<string> WaitForLineAsync(Func<string, bool> match, CancellationToken cancellation = default)
    {
        ArgumentNullException.ThrowIfNull(match);
        var seen = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        lock (_gate)
        {
            // Under the lock with the reader's append, so a line is either in _lines here or checked against this waiter there.
            foreach (string line in _lines)
            {
                if (match(line)) return Task.FromResult(line);
            }
            if (_ended) return Task.FromException<string>(OutputEnded());
            _waiters.Add((match, seen));
        }
        if (!cancellation.CanBeCanceled) return seen.Task;
        var registration = cancellation.Register(() =>
        {
            lock (_gate) _waiters.RemoveAll(w => w.Seen == seen);
            seen.TrySetCanceled(cancellation);
        });
        _ = seen.Task.ContinueWith(_ => registration.Dispose(), CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
        return seen.Task;
    }

    /// <summary>Closes the child's standard input (its stop signal), reads the rest of its output and waits for it to exit.</summary>
    /// <exception cref="TimeoutException">The child outlived <paramref name="timeout"/> (it is killed).</exception>
    public async Task<StoppedProcess> StopAsync(TimeSpan timeout)
    {
        _process.StandardInput.Close();
        using var cts = new CancellationTokenSource(timeout);
        List<string> output;
        try
        {
            output = await _output.WaitAsync(cts.Token).ConfigureAwait(false);
            await _process.WaitForExitAsync(cts.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            Kill(_process);
            throw new TimeoutException($"The process did not stop within {timeout.TotalSeconds:0} s of its standard input closing, and was killed.");
        }
        string errors = await _errors.ConfigureAwait(false);
        return new StoppedProcess(_process.ExitCode, output, errors.Trim());
    }

    /// <summary>Kills the child if it is still running.</summary>
    public void Dispose()
    {
        Kill(_process);
        _process.Dispose();
    }

    private async Task<List<string>> ReadLinesAsync(StreamReader reader)
    {
        var seen = new List<TaskCompletionSource<string>>();
        while (await reader.ReadLineAsync().ConfigureAwait(false) is { } line)
        {
            lock (_gate)
            {
                _lines.Add(line);
                for (int i = _waiters.Count - 1; i >= 0; i--)
                {
                    if (!_waiters[i].Match(line)) continue;
                    seen.Add(_waiters[i].Seen);
                    _waiters.RemoveAt(i);
                }
            }
            foreach (var waiter in seen) waiter.TrySetResult(line); // outside the lock: its continuations run elsewhere anyway
            seen.Clear();
        }
        TaskCompletionSource<string>[] unmatched;
        List<string> all;
        lock (_gate)
        {
            _ended = true;
            unmatched = [.. _waiters.Select(w => w.Seen)];
            _waiters.Clear();
            all = [.. _lines];
        }
        foreach (var waiter in unmatched) waiter.TrySetException(OutputEnded());
        return all;
    }

    private static InvalidOperationException OutputEnded() => new("The process's output ended without the line waited for.");

    private static void Kill(Process process)
    {
        try
        {
            if (!process.HasExited) process.Kill(entireProcessTree: true);
        }
        catch (InvalidOperationException)
        {
            // already gone
        }
    }
}
