using System.Diagnostics;
using System.Net;
using System.Text.Json;
using Manaloc.Lab.RequestServer.Servers;

namespace Manaloc.Lab.RequestServer;

/// <summary>How to start a process that runs <see cref="ServeCommand"/>: a program and the arguments that come before serve's options.</summary>
/// <param name="FileName">The program, e.g. the dotnet host.</param>
/// <param name="Arguments">The arguments up to and including the one that selects <c>serve</c>, e.g. <c>exec RequestServer.dll serve</c>.</param>
/// <remarks>The lab runs the command in a child process of its own; the tests run samples/RequestServer's.</remarks>
public sealed record ServerLaunch(string FileName, IReadOnlyList<string> Arguments);

/// <summary>
/// A server build running in a child process (<c>serve --stop-on-eof</c>), so its GC, allocation
/// and memory figures are its own. Stopped by closing its standard input; killed if it outlives a timeout.
/// </summary>
public sealed class ServerProcess : IDisposable
{
    private readonly Process _process;
    private readonly Task<string> _stderr;

    private ServerProcess(Process process, IPEndPoint endPoint, Task<string> stderr)
    {
        _process = process;
        EndPoint = endPoint;
        _stderr = stderr;
    }

    /// <summary>Where the child listens.</summary>
    public IPEndPoint EndPoint { get; }

    /// <summary>The child's process id.</summary>
    public int Id => _process.Id;

    /// <summary>Starts <c>… serve --build … --port 0 --stop-on-eof</c> and waits until it listens.</summary>
    /// <param name="launch">The program and the arguments that select <c>serve</c>.</param>
    /// <param name="build">Which build.</param>
    /// <param name="extraArguments">Further <c>serve</c> options.</param>
    /// <param name="timeout">How long the start may take.</param>
    /// <exception cref="InvalidOperationException">The child exited or did not listen in time (it is killed).</exception>
    public static async Task<ServerProcess> StartAsync(ServerLaunch launch, ServerBuild build, IEnumerable<string> extraArguments, TimeSpan timeout)
    {
        ArgumentNullException.ThrowIfNull(launch);
        var start = new ProcessStartInfo(launch.FileName)
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string a in launch.Arguments.Concat(["--build", ServerFactory.NameOf(build), "--port", "0", "--stop-on-eof"]).Concat(extraArguments))
        {
            start.ArgumentList.Add(a);
        }
        var process = Process.Start(start) ?? throw new InvalidOperationException("The server process did not start.");
        var stderr = process.StandardError.ReadToEndAsync();
        using var cts = new CancellationTokenSource(timeout);
        try
        {
            while (await process.StandardOutput.ReadLineAsync(cts.Token).ConfigureAwait(false) is { } line)
            {
                if (line.StartsWith(ServeCommand.ListeningPrefix, StringComparison.Ordinal))
                {
                    return new ServerProcess(process, IPEndPoint.Parse(line[ServeCommand.ListeningPrefix.Length..]), stderr);
                }
            }
        }
        catch (OperationCanceledException)
        {
            // fall through: killed below
        }
        Kill(process);
        string errors = await stderr.ConfigureAwait(false);
        process.Dispose();
        throw new InvalidOperationException($"The {ServerFactory.NameOf(build)} server did not start listening within {timeout.TotalSeconds:0} s. {errors.Trim()}");
    }

    /// <summary>Closes the child's standard input (its stop signal) and returns its shutdown report.</summary>
    /// <exception cref="InvalidOperationException">The child printed no report, exited with an error, or outlived <paramref name="timeout"/> (it is killed).</exception>
    public async Task<ShutdownReport> StopAsync(TimeSpan timeout)
    {
        _process.StandardInput.Close();
        using var cts = new CancellationTokenSource(timeout);
        ShutdownReport? report = null;
        try
        {
            while (await _process.StandardOutput.ReadLineAsync(cts.Token).ConfigureAwait(false) is { } line)
            {
                if (line.StartsWith(ServeCommand.ReportPrefix, StringComparison.Ordinal))
                {
                    report = JsonSerializer.Deserialize<ShutdownReport>(line.AsSpan(ServeCommand.ReportPrefix.Length));
                }
            }
            await _process.WaitForExitAsync(cts.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            Kill(_process);
            throw new InvalidOperationException($"The server process did not stop within {timeout.TotalSeconds:0} s and was killed.");
        }
        string errors = await _stderr.ConfigureAwait(false);
        return report ?? throw new InvalidOperationException($"The server process exited with code {_process.ExitCode} and no shutdown report. {errors.Trim()}");
    }

    /// <summary>Kills the child if it is still running.</summary>
    public void Dispose()
    {
        Kill(_process);
        _process.Dispose();
    }

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
