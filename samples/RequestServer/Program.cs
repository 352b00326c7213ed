using System.CommandLine;
using System.Net;
using Manaloc.Lab.RequestServer;
using Manaloc.Lab.RequestServer.Load;

var target = new Option<int>("--port") { Description = "The server's port on 127.0.0.1.", Required = true };
var clients = new Option<int>("--clients") { Description = "Polite clients, each on its own connection.", DefaultValueFactory = _ => 8 };
var rate = new Option<double>("--rate") { Description = "Requests per second per polite client, on a fixed (open-loop) schedule.", DefaultValueFactory = _ => 250 };
var flood = new Option<bool>("--flood") { Description = "Add one flooding client that keeps --window requests outstanding." };
var pipelined = new Option<int>("--pipelined") { Description = "Pipelined clients besides the flooder (a saturating load).", DefaultValueFactory = _ => 0 };
var window = new Option<int>("--window") { Description = "Requests a pipelined client keeps outstanding.", DefaultValueFactory = _ => 4096 };
var duration = new Option<double>("--duration") { Description = "Seconds of sending (at most 600); answers are then awaited for at most 10 s.", DefaultValueFactory = _ => 5 };
var deadline = new Option<int>("--deadline-us") { Description = "Deadline budget of each request in microseconds (0: none).", DefaultValueFactory = _ => 100_000 };
var compute = new Option<int>("--compute") { Description = "Iterations of a compute request (about 1 ns each).", DefaultValueFactory = _ => 20_000 };

var load = new Command("load", "Run the load generator against a server on 127.0.0.1: polite open-loop clients (latency from the intended send time: coordinated omission corrected, HdrHistogram) and optionally a flooder; every request accounted for.");
foreach (var o in new Option[] { target, clients, rate, flood, pipelined, window, duration, deadline, compute }) load.Options.Add(o);
load.SetAction(parse =>
{
    var options = new LoadOptions
    {
        Target = new IPEndPoint(IPAddress.Loopback, parse.GetValue(target)),
        PoliteClients = parse.GetValue(clients),
        PoliteRate = parse.GetValue(rate),
        PipelinedClients = parse.GetValue(pipelined) + (parse.GetValue(flood) ? 1 : 0),
        PipelineWindow = parse.GetValue(window),
        Duration = TimeSpan.FromSeconds(parse.GetValue(duration)),
        DeadlineMicros = parse.GetValue(deadline),
        ComputeIterations = parse.GetValue(compute),
    };
    try
    {
        var result = LoadGenerator.Run(options);
        Console.WriteLine($"polite:    {result.Polite}");
        Console.WriteLine($"           latency from intended send time: {result.PoliteLatency}; send lag {result.SendLag}");
        Console.WriteLine($"pipelined: {result.Pipelined}");
        Console.WriteLine($"           latency: {result.PipelinedLatency}");
        Console.WriteLine($"ok/s {result.OkPerSecond:0}, pipelined share of ok {result.PipelinedShare:P0}, protocol violations {result.Violations}");
        return result.Total.Lost == 0 && result.Violations == 0 ? 0 : 1;
    }
    catch (ArgumentException e)
    {
        Console.Error.WriteLine($"error: {e.Message}");
        return 2;
    }
});

var root = new RootCommand(
    "A request server on 127.0.0.1 with a length-prefixed binary protocol (docs/server.md), built four ways from the same handler logic, and a load generator to compare them.\n" +
    "Builds (serve --build): manaloc = BufferManager frames, pooled requests queued per connection, connections taking turns on a DedicatedThreadDispatcher, a share per connection (a flooder is paused at its share), Deadline checks before work, native records; " +
    "bcl = async sockets + Pipelines, new byte[] per frame, unbounded Channel to ThreadPool workers, DateTime.UtcNow deadlines; kestrel = Kestrel ConnectionHandler over Pipelines, requests run inline; " +
    "kestrel-manaloc = the same with Manaloc.AspNetCore: Manaloc's memory pool for Kestrel, each read's frames run in turns on a hosted dedicated dispatcher.\n" +
    "Example: serve --build manaloc --port 5050, then in another shell: load --port 5050 --flood");
root.Subcommands.Add(ServeCommand.Create());
root.Subcommands.Add(load);
return await root.Parse(args).InvokeAsync();
