using System.Runtime.InteropServices;
using System.Text.Json;
using Manaloc.Threading;
using RequestServer.Servers;

namespace RequestServer;

/// <summary>The <c>serve</c> command: start a build, wait for a stop signal, shut down gracefully, report.</summary>
/// <remarks>
/// Standard output carries two machine-read lines: <c>listening 127.0.0.1:PORT</c> once the server accepts
/// connections, and <c>shutdown-report {json}</c> (a <see cref="ShutdownReport"/>) at the end
/// (<see cref="ServerProcess"/> reads them). Exit code 0 when no request was lost, 1 otherwise.
/// </remarks>
public static class ServeCommand
{
    /// <summary>Prefix of the line that says where the server listens.</summary>
    public const string ListeningPrefix = "listening ";
    /// <summary>Prefix of the line that carries the shutdown report.</summary>
    public const string ReportPrefix = "shutdown-report ";

    /// <summary>Runs a server until SIGINT/SIGTERM (or standard input closing, with <paramref name="stopOnEof"/>).</summary>
    public static async Task<int> RunAsync(ServerBuild build, ServerOptions options, TimeSpan drain, bool stopOnEof, TextWriter output)
    {
        // The main thread sleeps on this until a signal handler or the stdin watcher sets it.
        using var stop = new EconomicResetEvent();
        using var sigint = PosixSignalRegistration.Create(PosixSignal.SIGINT, Stop);
        using var sigterm = PosixSignalRegistration.Create(PosixSignal.SIGTERM, Stop);
        await using var server = await ServerFactory.StartAsync(build, options).ConfigureAwait(false);
        output.WriteLine($"{ListeningPrefix}{server.EndPoint}");
        output.Flush();
        if (stopOnEof)
        {
            new Thread(() =>
            {
                while (Console.In.Read() >= 0) { /* anything before the end is ignored */ }
                stop.Set();
            }) { IsBackground = true, Name = "stdin watcher" }.Start();
        }
        await Task.Factory.StartNew(stop.Wait, TaskCreationOptions.LongRunning).ConfigureAwait(false);
        var report = await server.ShutdownAsync(drain).ConfigureAwait(false);
        output.WriteLine(ReportPrefix + JsonSerializer.Serialize(report));
        Console.Error.WriteLine($"{ServerFactory.NameOf(build)}: {report}");
        output.Flush();
        return report.Lost == 0 ? 0 : 1;

        void Stop(PosixSignalContext context)
        {
            context.Cancel = true; // shut down gracefully instead of the default termination
            stop.Set();
        }
    }
}
