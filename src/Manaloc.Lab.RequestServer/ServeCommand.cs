using System.CommandLine;
using System.Runtime.InteropServices;
using System.Text.Json;
using Manaloc.Lab.RequestServer.Servers;
using Manaloc.Threading;

namespace Manaloc.Lab.RequestServer;

/// <summary>The <c>serve</c> command: start a build, wait for a stop signal, shut down gracefully, report.</summary>
/// <remarks>
/// Standard output carries two machine-read lines: <c>listening 127.0.0.1:PORT</c> once the server accepts
/// connections, and <c>shutdown-report {json}</c> (a <see cref="ShutdownReport"/>) at the end
/// (<see cref="ServerProcess"/> reads them). Exit code 0 when no request was lost, 1 otherwise, 2 on bad options.
/// One definition serves both hosts that run it: samples/RequestServer's command line and the lab's child process.
/// </remarks>
public static class ServeCommand
{
    /// <summary>Prefix of the line that says where the server listens.</summary>
    public const string ListeningPrefix = "listening ";
    /// <summary>Prefix of the line that carries the shutdown report.</summary>
    public const string ReportPrefix = "shutdown-report ";
    /// <summary>Exit code of options that cannot be used.</summary>
    public const int UsageError = 2;

    /// <summary>The <c>serve</c> command with its options.</summary>
    public static Command Create()
    {
        var build = new Option<string>("--build") { Description = "Which build: manaloc (Manaloc's parts), bcl (the framework's defaults: ThreadPool, unbounded Channel, new byte[] per frame, DateTime deadlines) kestrel (a Kestrel ConnectionHandler over Pipelines) or kestrel-manaloc (the same with Manaloc's memory pool and a hosted dispatcher running each connection's frames in turns).", Required = true };
        var port = new Option<int>("--port") { Description = "Port on 127.0.0.1 (0 picks a free one and prints it).", DefaultValueFactory = _ => 0 };
        var workers = new Option<int>("--workers") { Description = "Worker threads (manaloc dispatcher, bcl channel readers).", DefaultValueFactory = _ => Environment.ProcessorCount };
        var share = new Option<int>("--share") { Description = "manaloc: requests one connection may have queued or running; over it the connection is not read until half of them finished.", DefaultValueFactory = _ => 32 };
        var busyOverShare = new Option<bool>("--busy-over-share") { Description = "manaloc: answer busy to requests over the share instead of pausing the connection." };
        var drain = new Option<double>("--drain") { Description = "Shutdown: seconds to finish accepted requests; the rest are answered busy.", DefaultValueFactory = _ => 5 };
        var stopOnEof = new Option<bool>("--stop-on-eof") { Description = "Also shut down when standard input closes (how the lab stops a server it started)." };

        var serve = new Command("serve", "Run one build of the server on 127.0.0.1 until Ctrl+C or SIGTERM, then shut down gracefully and report what was dropped.");
        foreach (var o in new Option[] { build, port, workers, share, busyOverShare, drain, stopOnEof }) serve.Options.Add(o);
        serve.SetAction(async parse =>
        {
            try
            {
                double drainSeconds = parse.GetValue(drain);
                if (!(drainSeconds is >= 0 and <= 600)) throw new ArgumentException($"--drain must be between 0 and 600 seconds, not {drainSeconds}.");
                return await RunAsync(
                    ServerFactory.Parse(parse.GetValue(build)!),
                    new ServerOptions { Port = parse.GetValue(port), Workers = parse.GetValue(workers), ConnectionShare = parse.GetValue(share), BusyOverShare = parse.GetValue(busyOverShare) },
                    TimeSpan.FromSeconds(drainSeconds),
                    parse.GetValue(stopOnEof),
                    Console.Out).ConfigureAwait(false);
            }
            catch (ArgumentException e)
            {
                Console.Error.WriteLine($"error: {e.Message}");
                return UsageError;
            }
        });
        return serve;
    }

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
        output.WriteLine(ReportPrefix + JsonSerializer.Serialize(report, ServerJson.Default.ShutdownReport));
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
