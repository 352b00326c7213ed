using System.Globalization;
using Manaloc.Lab.Harness;
using Manaloc.Lab.RequestServer;
using Manaloc.Lab.RequestServer.Load;
using Manaloc.Lab.RequestServer.Servers;

namespace Manaloc.Lab.Experiments;

/// <summary>
/// The parts together: the request server of <c>samples/RequestServer</c> built four ways (Manaloc's parts,
/// the BCL's defaults, Kestrel, and Kestrel with Manaloc.AspNetCore's pool and hosted dispatcher), each in its own
/// child process, under the same load: polite clients alone,
/// polite clients beside a flooder, and a saturating pipelined load. Polite latency percentiles (coordinated
/// omission corrected), the flooder's share, throughput, the server's allocation, GC and peak RSS, and every
/// request accounted for on both sides. The load generator and the phases live in the sample
/// (<see cref="BuildComparison"/>); this file turns their figures into the lab's measurements and targets.
/// </summary>
public sealed class Server() : Experiment(
    "server", "Tradeoffs in High Performance Software (seed 002), with the parts of seeds 000–003: a whole request server",
    "Request server built from Manaloc vs BCL defaults vs Kestrel vs Kestrel with Manaloc.AspNetCore (child processes): polite latency with and without a flood, throughput, allocation, GC, RSS, lost requests.",
    ServerFactory.BuildNames, "bcl", quickSeconds: 27, sweepParameter: "one-in")
{
    private static readonly (int OneIn, double Percentile)[] Percentiles = [(2, 50), (10, 90), (100, 99), (1000, 99.9)];

    /// <inheritdoc/>
    public override Claim Claim => new("One connection's flood must not become everyone's latency: dedicated threads, a bounded queue, a share per connection, pooled buffers (no figure for a whole server); the project's targets are ratios between the builds.", null,
        new Metric("polite p99 under the flood, bcl ÷ manaloc", Unit.Ratio, f => FloodP99(f, "bcl") / FloodP99(f, "manaloc")));

    /// <inheritdoc/>
    public override IReadOnlyList<Target> Targets =>
    [
        Target.AtLeast("polite p99 under the flood: bcl / manaloc", Unit.Ratio, f => FloodP99(f, "bcl") / FloodP99(f, "manaloc"), 5),
        Target.AtLeast("polite p99 under the flood: kestrel / manaloc", Unit.Ratio, f => FloodP99(f, "kestrel") / FloodP99(f, "manaloc"), 1),
        Target.AtLeast("throughput without the flood (saturated): manaloc / kestrel", Unit.Ratio, f => f.TimesBetter("manaloc", "kestrel", Load("saturated")), 0.9),
        Target.AtLeast("allocated bytes per request (quiet): bcl / manaloc", Unit.Ratio,
            f => PhaseMetric(f, "bcl", "quiet", "allocatedBytesPerRequest") / Positive(PhaseMetric(f, "manaloc", "quiet", "allocatedBytesPerRequest")), 10),
        // The caps' bound depends on the run's connections, so the goal is a share of it rather than a fixed number of MB.
        Target.AtMost("manaloc peak RSS growth from quiet to flood, share of its caps' bound", Unit.Percent,
            f => 100 * (PhaseMetric(f, "manaloc", "flood", "peakRssMB") - PhaseMetric(f, "manaloc", "quiet", "peakRssMB")) / Positive(PhaseMetric(f, "manaloc", "flood", "capMB")), 100),
        Target.AtMost("requests lost, every build and phase", "requests", LostEverywhere, 0),
        Target.AtLeast("throughput without the flood (saturated): kestrel-manaloc / kestrel", Unit.Ratio, f => f.TimesBetter("kestrel-manaloc", "kestrel", Load("saturated")), 1.0),
        Target.AtLeast("polite p99 under the flood: kestrel / kestrel-manaloc", Unit.Ratio, f => FloodP99(f, "kestrel") / FloodP99(f, "kestrel-manaloc"), 1),
    ];

    /// <summary>A build's polite p99 under the flood in µs, at least 1 µs (a finer figure is below the generator's resolution); null when not recorded.</summary>
    private static double? FloodP99(Figures f, string build) => f.Median(build, m => Load("flood")(m) && m.Parameters.Is("one-in", 100)) is { } p ? Math.Max(p, 1) : null;

    private static Func<Measurement, bool> Load(string load) => m => m.Parameters.Is("load", load);

    /// <summary>One of the server's figures for a build and load (the same on every percentile's measurement); null when that phase was not recorded.</summary>
    private static double? PhaseMetric(Figures f, string build, string load, string key)
        => f.Value(build, m => m.Metrics.TryGetValue(key, out double v) ? v : null, Load(load));

    private static double? Positive(double? value) => value > 0 ? value : null;

    /// <summary>Requests lost over every build and phase; null unless every build recorded every phase (a missing phase is not "none lost").</summary>
    private static double? LostEverywhere(Figures f)
    {
        double total = 0;
        foreach (string build in ServerFactory.BuildNames)
        {
            foreach (string phase in BuildComparison.Phases)
            {
                if (PhaseMetric(f, build, phase, "lost") is not { } lost) return null;
                total += lost;
            }
        }
        return total;
    }
    /// <inheritdoc/>
    public override Headline Headline => new(
        new Metric("Manaloc build vs BCL defaults: polite clients' p99 under one connection's flood (times as short)", Unit.Ratio, f => FloodP99(f, "bcl") / FloodP99(f, "manaloc")),
        new Metric("vs Kestrel, the same", Unit.Ratio, f => FloodP99(f, "kestrel") / FloodP99(f, "manaloc")),
        Metric.TimesBetter("throughput without the flood vs Kestrel (1x = as fast)", "manaloc", "kestrel", Load("saturated")));

    private static LoadPlan PlanFor(RunSettings settings) => settings.Pick(LoadPlan.Smoke, LoadPlan.Quick, LoadPlan.Full);

    /// <inheritdoc/>
    public override IReadOnlyList<ParameterSpec> DescribeParameters(RunSettings settings)
    {
        var plan = PlanFor(settings);
        return
        [
            new("load", $"quiet: {plan.PoliteClients} polite clients at {plan.PoliteRate}/s each; flood: the same plus one flooder keeping {plan.FloodWindow} requests outstanding; saturated: {plan.SaturatingClients} pipelined clients, window {plan.SaturatingWindow}; {plan.Phase.TotalSeconds} s each", BuildComparison.Phases),
            new("one-in", "polite latency percentile as 1-in-N: 2 = p50, 10 = p90, 100 = p99, 1000 = p99.9", Percentiles.Select(p => p.OneIn.ToString(System.Globalization.CultureInfo.InvariantCulture)).ToArray()),
        ];
    }

    /// <inheritdoc/>
    public override void Run(ExperimentContext context)
    {
        var plan = PlanFor(context.Settings);
        // The server runs in a child lab process (RunChild below), so its GC, allocation and memory figures are its own.
        var launch = new ServerLaunch(ChildProcess.FindDotnetHost(), ["exec", ChildProcess.LabAssemblyPath, "child", Name, ServeKey, "--"]);
        var rows = new List<IReadOnlyList<string>>();
        // Every build's process starts at once; they are then loaded one after another. The shutdown reports are notes, which
        // only the first launch's reach the report: the other launches kill the last build rather than wait for its stop.
        var all = BuildComparison.RunAllAsync([.. ServerFactory.BuildNames.Select(ServerFactory.Parse)], plan, launch, context.Status, context.Cancellation,
            lastShutdownReport: context.Settings.ReportsNotesAndTables).GetAwaiter().GetResult();
        foreach (var figures in all)
        {
            string name = ServerFactory.NameOf(figures.Build);
            foreach (var phase in figures.Phases)
            {
                Record(context, name, phase, CapMegabytes(plan));
                rows.Add(Row(name, phase));
            }
            if (figures.Shutdown is { } shutdown) context.Note($"{name}: {shutdown}.");
            foreach (var phase in figures.Phases.Where(p => p.Phase != "saturated" && p.Load.PoliteLatency.Count == 0))
            {
                context.Note($"{name}, {phase.Phase}: no polite request was answered, so no polite latency was recorded.");
            }
            if (name == "manaloc" && figures.Phases.Any(p => p.Phase == "flood") && figures.Phases.Any(p => p.Phase == "quiet"))
            {
                double growth = (figures["flood"].After.PeakWorkingSetBytes - figures["quiet"].After.PeakWorkingSetBytes) / 1e6;
                context.Note($"manaloc's peak RSS grew {Format.Significant(growth)} MB from quiet to flood; its caps' bound is {Format.Significant(CapMegabytes(plan))} MB.");
            }
        }
        context.AddTable(new ResultTable("Per build and load (latency in µs from the intended send time; the server's figures are deltas over the phase)",
            ["build", "load", "p50", "p99", "p99.9", "ok/s", "flooder share", "B/request", "GCs", "GC pause ms", "peak RSS MB", "lost"], rows));
        context.Note("Latencies include the load generator's send lag (it sleeps between sends rather than spin on a small machine; see the send-lag metric), the same for every build. Peak RSS is the server process's high-water mark so far (phases run in order: quiet, flood, saturated).");
        var o = new ServerOptions();
        context.Note($"Manaloc's caps: {o.ConnectionShare} requests per connection queued, running or unsent (at it the connection is not read), {o.MaxConnections} connections; with the {plan.PoliteClients + 2} connections of this run they bound the buffers it holds for requests to {Format.Significant(CapMegabytes(plan))} MB (ServerOptions.HeldBytesBound; frames of the maximum size).");
    }

    private const string ServeKey = "serve";

    /// <summary>The child's side: one build serving until its standard input closes (<see cref="ServeCommand"/>'s options follow the key).</summary>
    public override void RunChild(string key, IReadOnlyList<string> arguments, ExperimentContext context)
    {
        if (key != ServeKey) base.RunChild(key, arguments, context);
        int exit = ServeCommand.Create().Parse(arguments.ToArray()).InvokeAsync().GetAwaiter().GetResult();
        // Lost requests are in the shutdown report the parent reads; only options the command could not use fail the child.
        if (exit == ServeCommand.UsageError) throw new ArgumentException($"The server child could not use its options: {string.Join(' ', arguments)}.", nameof(arguments));
    }

    /// <summary>Memory the Manaloc build's caps let it hold with this plan's connections open (polite, flooder, stats).</summary>
    private static double CapMegabytes(LoadPlan plan) => new ServerOptions().HeldBytesBound(plan.PoliteClients + 2) / 1e6;

    private static void Record(ExperimentContext context, string build, PhaseFigures phase, double capMB)
    {
        var load = phase.Load;
        var metrics = new Dictionary<string, double>
        {
            ["okPerSecond"] = load.OkPerSecond,
            ["flooderShare"] = load.PipelinedShare,
            ["allocatedBytesPerRequest"] = phase.AllocatedBytesPerRequest,
            ["gcCount"] = phase.GcCount,
            ["gcPauseMs"] = phase.GcPauseMs,
            ["peakRssMB"] = phase.After.PeakWorkingSetBytes / 1e6,
            ["lost"] = phase.Lost,
            ["sent"] = load.Total.Sent,
            ["busy"] = load.Total.Busy,
            ["expired"] = load.Total.Expired,
            ["sendLagP99Micros"] = load.SendLag.P99,
            ["capMB"] = capMB,
        };
        if (phase.Phase == "saturated")
        {
            context.RecordSamples(build, "ok/s", [load.OkPerSecond], Parameters.Of(("load", phase.Phase)), lowerIsBetter: false, metrics: metrics);
            return;
        }
        foreach (var (oneIn, percentile) in Percentiles)
        {
            double micros = percentile switch { 50 => load.PoliteLatency.P50, 90 => load.PoliteLatency.P90, 99 => load.PoliteLatency.P99, _ => load.PoliteLatency.P999 };
            // No polite request answered gives no percentile: recorded as nothing, so the targets on it read "not measured", not 0 µs.
            if (!double.IsFinite(micros)) continue;
            context.RecordSamples(build, "µs", [micros], Parameters.Of(("load", phase.Phase), ("one-in", oneIn)), metrics: metrics);
        }
    }

    private static string[] Row(string build, PhaseFigures phase)
    {
        var l = phase.Load;
        string Us(double v) => double.IsFinite(v) ? v.ToString("0", CultureInfo.InvariantCulture) : "–";
        return [build, phase.Phase, Us(l.PoliteLatency.P50), Us(l.PoliteLatency.P99), Us(l.PoliteLatency.P999), Format.Significant(l.OkPerSecond),
            phase.Phase == "quiet" ? "–" : l.PipelinedShare.ToString("P0", CultureInfo.InvariantCulture), Format.Significant(phase.AllocatedBytesPerRequest),
            phase.GcCount.ToString(CultureInfo.InvariantCulture), phase.GcPauseMs.ToString("0.#", CultureInfo.InvariantCulture),
            (phase.After.PeakWorkingSetBytes / 1e6).ToString("0", CultureInfo.InvariantCulture), phase.Lost.ToString(CultureInfo.InvariantCulture)];
    }
}
