using System.Globalization;
using Manaloc.Lab.Harness;
using RequestServer;
using RequestServer.Load;
using RequestServer.Servers;

namespace Manaloc.Lab.Experiments;

/// <summary>
/// The parts together: the request server of <c>samples/RequestServer</c> built three ways (Manaloc's parts,
/// the BCL's defaults, Kestrel), each in its own child process, under the same load: polite clients alone,
/// polite clients beside a flooder, and a saturating pipelined load. Polite latency percentiles (coordinated
/// omission corrected), the flooder's share, throughput, the server's allocation, GC and peak RSS, and every
/// request accounted for on both sides. The load generator and the phases live in the sample
/// (<see cref="BuildComparison"/>); this file turns their figures into the lab's measurements and targets.
/// </summary>
public sealed class Server : Experiment
{
    private static readonly (string OneIn, double Percentile)[] Percentiles = [("2", 50), ("10", 90), ("100", 99), ("1000", 99.9)];

    /// <inheritdoc/>
    public override string Name => "server";
    /// <inheritdoc/>
    public override string Article => "Tradeoffs in High Performance Software (seed 002), with the parts of seeds 000–003: a whole request server";
    /// <inheritdoc/>
    public override string Description => "Request server built from Manaloc vs BCL defaults vs Kestrel (child processes): polite latency with and without a flood, throughput, allocation, GC, RSS, lost requests.";
    /// <inheritdoc/>
    public override ArticleFigure Figure => new("One connection's flood must not become everyone's latency: dedicated threads, a bounded queue, a share per connection, pooled buffers (no figure for a whole server); the project's targets are ratios between the builds.");
    /// <inheritdoc/>
    public override IReadOnlyList<string> Variants { get; } = ServerFactory.BuildNames;
    /// <inheritdoc/>
    public override string Baseline => "bcl";
    /// <inheritdoc/>
    public override string? SweepParameter => "one-in";

    private static LoadPlan PlanFor(RunSettings settings) => settings.IsSmoke ? LoadPlan.Smoke : settings.IsQuick ? LoadPlan.Quick : LoadPlan.Full;

    /// <inheritdoc/>
    public override IReadOnlyList<ParameterSpec> DescribeParameters(RunSettings settings)
    {
        var plan = PlanFor(settings);
        return
        [
            new("load", $"quiet: {plan.PoliteClients} polite clients at {plan.PoliteRate}/s each; flood: the same plus one flooder keeping {plan.FloodWindow} requests outstanding; saturated: {plan.SaturatingClients} pipelined clients, window {plan.SaturatingWindow}; {plan.Phase.TotalSeconds} s each", BuildComparison.Phases),
            new("one-in", "polite latency percentile as 1-in-N: 2 = p50, 10 = p90, 100 = p99, 1000 = p99.9", Percentiles.Select(p => p.OneIn).ToArray()),
        ];
    }

    /// <inheritdoc/>
    public override void Run(ExperimentContext context)
    {
        var plan = PlanFor(context.Settings);
        string serverAssembly = typeof(ServerProcess).Assembly.Location;
        var rows = new List<IReadOnlyList<string>>();
        foreach (string name in ServerFactory.BuildNames)
        {
            context.Cancellation.ThrowIfCancellationRequested();
            var figures = BuildComparison.RunAsync(ServerFactory.Parse(name), plan, ChildProcess.FindDotnetHost(), serverAssembly, context.Status, context.Cancellation).GetAwaiter().GetResult();
            foreach (var phase in figures.Phases)
            {
                Record(context, name, phase, CapMegabytes(plan));
                rows.Add(Row(name, phase));
            }
            var shutdown = figures.Shutdown;
            context.Note($"{name}: {shutdown}.");
        }
        context.AddTable(new ResultTable("Per build and load (latency in µs from the intended send time; the server's figures are deltas over the phase)",
            ["build", "load", "p50", "p99", "p99.9", "ok/s", "flooder share", "B/request", "GCs", "GC pause ms", "peak RSS MB", "lost"], rows));
        context.Note("Latencies include the load generator's send lag (it sleeps between sends rather than spin on a small machine; see the send-lag metric), the same for every build. Peak RSS is the server process's high-water mark so far (phases run in order: quiet, flood, saturated).");
        var o = new ServerOptions();
        context.Note($"Manaloc's caps: {o.ConnectionShare} requests per connection queued, running or unsent (at it the connection is not read), {o.MaxConnections} connections; with the {plan.PoliteClients + 2} connections of this run they bound the buffers it holds for requests to {Format.Significant(CapMegabytes(plan))} MB (ServerOptions.HeldBytesBound; frames of the maximum size).");
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
            context.RecordSamples(build, "µs", [double.IsFinite(micros) ? micros : 0], Parameters.Of(("load", phase.Phase), ("one-in", oneIn)), metrics: metrics);
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

    /// <inheritdoc/>
    public override VerdictResult Judge(IReadOnlyList<Measurement> measurements)
    {
        Measurement? Find(string build, string load, string? oneIn = null)
            => measurements.FirstOrDefault(m => m.Variant == build && m.Parameters.GetValueOrDefault("load") == load && (oneIn is null || m.Parameters.GetValueOrDefault("one-in") == oneIn));
        double? P99(string build) => Find(build, "flood", "100")?.Statistics.Median;
        double? Metric(string build, string load, string key) => Find(build, load)?.Metrics.GetValueOrDefault(key);
        double? Ratio(double? a, double? b) => a is { } x && b is { } y && y > 0 ? x / y : null;
        if (P99("manaloc") is not { } ours || P99("bcl") is not { } bcl)
        {
            return new(Verdict.NotComparable, "The flood phase was not measured for both manaloc and bcl.");
        }
        double floodRatio = bcl / Math.Max(ours, 1);
        double lost = ServerFactory.BuildNames.SelectMany(b => BuildComparison.Phases.Select(p => Metric(b, p, "lost") ?? 0)).Sum();
        double? rssGrowth = Metric("manaloc", "flood", "peakRssMB") - Metric("manaloc", "quiet", "peakRssMB");
        double capMB = Find("manaloc", "flood", "100")?.Metrics.GetValueOrDefault("capMB") ?? double.NaN;
        var verdict = floodRatio >= 2 ? Verdict.Holds : floodRatio >= 0.9 ? Verdict.Shrinks : Verdict.Reversed;
        return new(verdict,
            $"polite p99 under the flood: manaloc {Format.Value(ours, "µs")}, bcl {Format.Value(bcl, "µs")}, kestrel {(P99("kestrel") is { } k ? Format.Value(k, "µs") : "n/a")} ({Format.Ratio(floodRatio)} better than bcl); {lost} requests lost over all builds and phases.",
            floodRatio, "x")
        {
            Targets =
            [
                TargetResult.AtLeast("polite p99 under the flood: bcl / manaloc", floodRatio, 5),
                TargetResult.AtLeast("polite p99 under the flood: kestrel / manaloc", Ratio(P99("kestrel"), ours), 1),
                TargetResult.AtLeast("throughput without the flood (saturated): manaloc / kestrel", Ratio(Metric("manaloc", "saturated", "okPerSecond"), Metric("kestrel", "saturated", "okPerSecond")), 0.9),
                TargetResult.AtLeast("allocated bytes per request (quiet): bcl / manaloc", Ratio(Metric("bcl", "quiet", "allocatedBytesPerRequest"), Metric("manaloc", "quiet", "allocatedBytesPerRequest")), 10),
                TargetResult.AtMost("manaloc peak RSS growth from quiet to flood (within its caps' bound)", rssGrowth, capMB, "MB"),
                TargetResult.AtMost("requests lost, every build and phase", lost, 0, "requests"),
            ],
        };
    }
}
