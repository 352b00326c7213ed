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
    private readonly ListeningProcess _child;

    private ServerProcess(ListeningProcess child) => _child = child;

    /// <summary>Where the child listens.</summary>
    public IPEndPoint EndPoint => _child.EndPoint;

    /// <summary>The child's process id.</summary>
    public int Id => _child.Id;

    /// <summary>Starts <c>… serve --build … --port 0 --stop-on-eof</c> and waits until it listens.</summary>
    /// <param name="launch">The program and the arguments that select <c>serve</c>.</param>
    /// <param name="build">Which build.</param>
    /// <param name="extraArguments">Further <c>serve</c> options.</param>
    /// <param name="timeout">How long the start may take.</param>
    /// <exception cref="InvalidOperationException">The child exited or did not listen in time (it is killed).</exception>
    public static async Task<ServerProcess> StartAsync(ServerLaunch launch, ServerBuild build, IEnumerable<string> extraArguments, TimeSpan timeout)
    {
        ArgumentNullException.ThrowIfNull(launch);
        var start = new ProcessStartInfo(launch.FileName);
        foreach (string a in launch.Arguments.Concat(["--build", ServerFactory.NameOf(build), "--port", "0", "--stop-on-eof"]).Concat(extraArguments))
        {
            start.ArgumentList.Add(a);
        }
        var child = await ListeningProcess.StartAsync(start, $"{ServerFactory.NameOf(build)} server",
            line => line.StartsWith(ServeCommand.ListeningPrefix, StringComparison.Ordinal) ? IPEndPoint.Parse(line.AsSpan(ServeCommand.ListeningPrefix.Length)) : null,
            timeout).ConfigureAwait(false);
        return new ServerProcess(child);
    }

    /// <summary>Closes the child's standard input (its stop signal) and returns its shutdown report.</summary>
    /// <exception cref="InvalidOperationException">The child printed no report, exited with an error, or outlived <paramref name="timeout"/> (it is killed).</exception>
    public async Task<ShutdownReport> StopAsync(TimeSpan timeout)
    {
        StoppedProcess stopped;
        try
        {
            stopped = await _child.StopAsync(timeout).ConfigureAwait(false);
        }
        catch (TimeoutException e)
        {
            throw new InvalidOperationException($"The server process did not stop within {timeout.TotalSeconds:0} s and was killed.", e);
        }
        string? reportLine = stopped.Output.LastOrDefault(line => line.StartsWith(ServeCommand.ReportPrefix, StringComparison.Ordinal));
        ShutdownReport? report = reportLine is null ? null : JsonSerializer.Deserialize(reportLine.AsSpan(ServeCommand.ReportPrefix.Length), ServerJson.Default.ShutdownReport);
        return report ?? throw new InvalidOperationException($"The server process exited with code {stopped.ExitCode} and no shutdown report. {stopped.Errors}");
    }

    /// <summary>Kills the child if it is still running.</summary>
    public void Dispose() => _child.Dispose();
}
