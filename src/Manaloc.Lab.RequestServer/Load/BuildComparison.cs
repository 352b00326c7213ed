using System.Net;
using Manaloc.Lab.RequestServer.Servers;

namespace Manaloc.Lab.RequestServer.Load;

/// <summary>
/// The load each build gets in a comparison: polite clients alone (quiet), polite clients beside one
/// flooder (flood), and a few pipelined clients within any share (saturated: throughput).
/// </summary>
/// <param name="PoliteClients">Polite clients.</param>
/// <param name="PoliteRate">Requests per second per polite client.</param>
/// <param name="FloodWindow">Requests the flooder keeps outstanding.</param>
/// <param name="SaturatingClients">Pipelined clients of the saturated phase.</param>
/// <param name="SaturatingWindow">Their window each (within the Manaloc build's default share, so nobody is paused or refused).</param>
/// <param name="WarmUp">An unmeasured mixed load first (JIT, pools, connections).</param>
/// <param name="Phase">Sending time of each measured phase.</param>
/// <param name="MaxPipelinedRequests">Most requests one pipelined client sends in a phase.</param>
public sealed record LoadPlan(int PoliteClients, double PoliteRate, int FloodWindow, int SaturatingClients, int SaturatingWindow, TimeSpan WarmUp, TimeSpan Phase, int MaxPipelinedRequests)
{
    /// <summary>Quick mode: under 2 s per build (with <see cref="BuildComparison.RunAllAsync"/>, four builds and their starts in about 8 s).</summary>
    /// <remarks>A phase of 0.4 s still gives 800 polite latencies (8 clients at 250/s), eight beyond the p99.</remarks>
    public static LoadPlan Quick { get; } = new(8, 250, 4096, 4, 16, TimeSpan.FromSeconds(0.25), TimeSpan.FromSeconds(0.4), 500_000);
    /// <summary>Full mode: about 25 s per build.</summary>
    public static LoadPlan Full { get; } = new(16, 250, 16_384, 4, 16, TimeSpan.FromSeconds(2), TimeSpan.FromSeconds(7), 1_000_000);
    /// <summary>Smoke mode (tests): proves the run works; its figures mean little.</summary>
    public static LoadPlan Smoke { get; } = new(2, 200, 256, 2, 8, TimeSpan.FromSeconds(0.1), TimeSpan.FromSeconds(0.3), 50_000);

    /// <summary>The options of one phase against <paramref name="target"/>.</summary>
    public LoadOptions For(string phase, IPEndPoint target) => phase switch
    {
        "quiet" => new LoadOptions { Target = target, PoliteClients = PoliteClients, PoliteRate = PoliteRate, Duration = Phase },
        "flood" => new LoadOptions { Target = target, PoliteClients = PoliteClients, PoliteRate = PoliteRate, PipelinedClients = 1, PipelineWindow = FloodWindow, MaxPipelinedRequests = MaxPipelinedRequests, Duration = Phase },
        "saturated" => new LoadOptions { Target = target, PoliteClients = 0, PipelinedClients = SaturatingClients, PipelineWindow = SaturatingWindow, MaxPipelinedRequests = MaxPipelinedRequests, Duration = Phase },
        "warm-up" => new LoadOptions { Target = target, PoliteClients = PoliteClients, PoliteRate = PoliteRate, PipelinedClients = 1, PipelineWindow = SaturatingWindow, MaxPipelinedRequests = MaxPipelinedRequests, Duration = WarmUp },
        _ => throw new ArgumentException($"Unknown phase '{phase}'.", nameof(phase)),
    };
}

/// <summary>One measured phase: the client's view and the server's counters before and after.</summary>
public sealed record PhaseFigures(string Phase, LoadResult Load, ServerStats Before, ServerStats After)
{
    /// <summary>Requests the server received in the phase.</summary>
    public long ServerReceived => After.Received - Before.Received;
    /// <summary>Managed bytes the server allocated per request received.</summary>
    public double AllocatedBytesPerRequest => (After.AllocatedBytes - Before.AllocatedBytes) / (double)Math.Max(1, ServerReceived);
    /// <summary>Server collections of any generation in the phase.</summary>
    public int GcCount => After.Gen0 - Before.Gen0 + After.Gen1 - Before.Gen1 + After.Gen2 - Before.Gen2;
    /// <summary>Server GC pause time in the phase.</summary>
    public double GcPauseMs => After.GcPauseMs - Before.GcPauseMs;
    /// <summary>Where the two sides' counts differ: received vs sent and each status. 0 when every request is accounted for on both sides.</summary>
    public long Mismatch => Math.Abs(ServerReceived - Load.Total.Sent)
        + Math.Abs(After.Ok - Before.Ok - Load.Total.Ok) + Math.Abs(After.Busy - Before.Busy - Load.Total.Busy)
        + Math.Abs(After.Expired - Before.Expired - Load.Total.Expired) + Math.Abs(After.Error - Before.Error - Load.Total.Error);
    /// <summary>Requests lost: unanswered at the client, unanswered at the server, or not matching between the two.</summary>
    public long Lost => Load.Total.Lost + (After.Unanswered - Before.Unanswered) + Mismatch + Load.Violations;
}

/// <summary>Everything measured of one build.</summary>
/// <param name="Build">The build.</param>
/// <param name="Phases">Its phases, in order.</param>
/// <param name="Shutdown">Its graceful stop's report; null when it was killed instead (the last build, when its report was not asked for).</param>
public sealed record BuildFigures(ServerBuild Build, IReadOnlyList<PhaseFigures> Phases, ShutdownReport? Shutdown)
{
    /// <summary>The phase named <paramref name="phase"/>.</summary>
    public PhaseFigures this[string phase] => Phases.First(p => p.Phase == phase);
}

/// <summary>Runs the same load plan against one build in its own child process.</summary>
public static class BuildComparison
{
    /// <summary>The measured phases, in order.</summary>
    public static IReadOnlyList<string> Phases { get; } = ["quiet", "flood", "saturated"];

    /// <summary>Starts <paramref name="build"/> as a child process, runs the warm-up and every phase, stops it and returns the figures.</summary>
    /// <param name="build">The build.</param>
    /// <param name="plan">The load.</param>
    /// <param name="launch">How to start a process that serves.</param>
    /// <param name="status">Told what runs now.</param>
    /// <param name="cancellation">Stops the load early.</param>
    public static async Task<BuildFigures> RunAsync(ServerBuild build, LoadPlan plan, ServerLaunch launch, Action<string>? status = null, CancellationToken cancellation = default)
        => (await RunAllAsync([build], plan, launch, status, cancellation).ConfigureAwait(false))[0];

    /// <summary>
    /// Starts every build in <paramref name="builds"/> as a child process at once, then runs the warm-up and every
    /// phase against one build after another (each asked to stop when its phases are done); the figures in the same order.
    /// </summary>
    /// <remarks>The starts overlap (a start is mostly JIT and waiting, about half a second each); a server with no load
    /// costs the one under load nothing, so the builds are still measured one at a time. A build's stop (its drain, its
    /// report, its exit: about half a second, mostly waiting) overlaps the next build's warm-up, which waits for it before
    /// its first measured phase, so no stop runs beside a measured phase. The last build's stop overlaps nothing: without
    /// <paramref name="lastShutdownReport"/> it is killed once measured (its figures are all taken by then).</remarks>
    /// <param name="builds">The builds, in the order they are measured.</param>
    /// <param name="plan">The load.</param>
    /// <param name="launch">How to start a process that serves.</param>
    /// <param name="status">Told what runs now.</param>
    /// <param name="cancellation">Stops the load early.</param>
    /// <param name="lastShutdownReport">Whether the last build is stopped gracefully for its shutdown report (else killed, its <see cref="BuildFigures.Shutdown"/> null).</param>
    public static async Task<IReadOnlyList<BuildFigures>> RunAllAsync(IReadOnlyList<ServerBuild> builds, LoadPlan plan, ServerLaunch launch, Action<string>? status = null, CancellationToken cancellation = default,
        bool lastShutdownReport = true)
    {
        status?.Invoke($"starting {string.Join(", ", builds.Select(ServerFactory.NameOf))}");
        var starts = builds.Select(b => ServerProcess.StartAsync(launch, b, [], TimeSpan.FromSeconds(30))).ToArray();
        try
        {
            await Task.WhenAll(starts).ConfigureAwait(false);
        }
        catch
        {
            foreach (var started in starts.Where(t => t.IsCompletedSuccessfully)) started.Result.Dispose();
            throw;
        }
        var measured = new List<IReadOnlyList<PhaseFigures>>();
        var stops = new List<Task<ShutdownReport>>();
        try
        {
            for (int i = 0; i < builds.Count; i++)
            {
                measured.Add(await MeasureAsync(builds[i], starts[i].Result, plan, stops.LastOrDefault(), status, cancellation).ConfigureAwait(false));
                if (i < builds.Count - 1 || lastShutdownReport) stops.Add(starts[i].Result.StopAsync(TimeSpan.FromSeconds(30)));
            }
            await Task.WhenAll(stops).ConfigureAwait(false);
        }
        finally
        {
            foreach (var started in starts) started.Result.Dispose(); // kills what a failure left running
        }
        return [.. builds.Select((build, i) => new BuildFigures(build, measured[i], i < stops.Count ? stops[i].Result : null))];
    }

    /// <summary>The warm-up and every phase against one build; <paramref name="previousStop"/>, the previous build's stop, is over before the first phase.</summary>
    private static async Task<IReadOnlyList<PhaseFigures>> MeasureAsync(ServerBuild build, ServerProcess server, LoadPlan plan, Task? previousStop, Action<string>? status, CancellationToken cancellation)
    {
        string name = ServerFactory.NameOf(build);
        status?.Invoke($"{name}: warm-up");
        LoadGenerator.Run(plan.For("warm-up", server.EndPoint), cancellation);
        // Its failure is reported once every build is measured, by the caller's wait for every stop.
        if (previousStop is not null) await previousStop.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        var phases = new List<PhaseFigures>();
        using (var stats = await StatsClient.ConnectAsync(server.EndPoint, cancellation).ConfigureAwait(false))
        {
            foreach (string phase in Phases)
            {
                status?.Invoke($"{name}: {phase}");
                var options = plan.For(phase, server.EndPoint);
                var start = await SettledStatsAsync(stats, cancellation).ConfigureAwait(false);
                ServerStats? before = null;
                // The phase's server figures start once the server has accepted every client: the cost of
                // setting up a connection is not a request's.
                var load = LoadGenerator.Run(options with
                {
                    OnConnected = () => before = ConnectedStatsAsync(stats, start.Connections + options.PoliteClients + options.PipelinedClients, cancellation).GetAwaiter().GetResult(),
                }, cancellation);
                var after = await SettledStatsAsync(stats, cancellation).ConfigureAwait(false);
                phases.Add(new PhaseFigures(phase, load, before ?? start, after));
            }
        }
        return phases;
    }

    /// <summary>Stats once the server has accepted <paramref name="connections"/> connections in all (or after 2 s).</summary>
    private static async Task<ServerStats> ConnectedStatsAsync(StatsClient client, long connections, CancellationToken cancellation)
    {
        var stats = await client.QueryAsync(cancellation).ConfigureAwait(false);
        for (int i = 0; i < 200 && stats.Connections < connections; i++)
        {
            await Task.Delay(10, cancellation).ConfigureAwait(false);
            stats = await client.QueryAsync(cancellation).ConfigureAwait(false);
        }
        return stats;
    }

    /// <summary>Stats once the server has nothing in flight (answers are counted when their send completes, just after the client reads them), or after 2 s.</summary>
    private static async Task<ServerStats> SettledStatsAsync(StatsClient client, CancellationToken cancellation)
    {
        var stats = await client.QueryAsync(cancellation).ConfigureAwait(false);
        for (int i = 0; i < 200 && stats.InFlight != 0; i++)
        {
            await Task.Delay(10, cancellation).ConfigureAwait(false);
            stats = await client.QueryAsync(cancellation).ConfigureAwait(false);
        }
        return stats;
    }
}
