using System.Globalization;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Experiments;

/// <summary>
/// Manaloc where users already are: the HttpApi service (src/Manaloc.Lab.HttpApi, a minimal-API service; samples/HttpApi is its command line) in its two builds, ASP.NET Core's
/// defaults and Manaloc wired in (Kestrel's memory pool, object pools, a dedicated dispatcher with a share per
/// client, JSON into pooled buffers), each in its own child process under the same load: polite clients alone,
/// polite clients beside one flooding client, an idle wait (what memory the flood left held), then a saturating
/// load. Polite latency from the intended send time, throughput, the service's allocation, GC and RSS, and every
/// request accounted for. The load generator is the lab's (<see cref="HttpLoad"/>).
/// </summary>
public sealed class Http() : Experiment(
    "http", "Tradeoffs in High Performance Software (seed 002), inside ASP.NET Core: Kestrel, ObjectPoolProvider, DI, a hosted dispatcher",
    "The HttpApi service with ASP.NET Core's defaults vs with Manaloc wired in (child processes): polite latency with and without a flood, throughput, allocation, GC, RSS, lost requests.",
    Builds, "defaults", quickSeconds: 36, sweepParameter: "one-in")
{
    private static readonly (int OneIn, double Percentile)[] Percentiles = [(2, 50), (100, 99), (1000, 99.9)];
    private static readonly string[] Builds = ["defaults", "manaloc"];
    // Saturated first: see Run's remarks.
    private static readonly string[] Phases = ["saturated", "quiet", "flood"];

    /// <summary>CPU-bound work items one client may have queued or running in the Manaloc build.</summary>
    /// <remarks>
    /// One, below the dispatcher's threads (the processor count): a share at or above the thread count lets the
    /// flooder keep every worker, and so every core, busy, and the polite clients' work then queues behind it and
    /// their requests compete with it for the CPU. The flooder's other requests wait in its line (16 deep, as many as
    /// its connections), so it is slowed to one worker rather than refused into a busy loop.
    /// </remarks>
    private const int Share = 1;

    /// <inheritdoc/>
    public override Claim Claim => new("Wired into ASP.NET Core, Manaloc's pool, object pools and a dispatcher with a share per client keep one client's flood from becoming everyone's latency (no figure for a whole service; the project's targets are ratios between the builds).", null,
        new Metric("polite p99 under the flood, defaults ÷ manaloc", Unit.Ratio, f => FloodP99(f, "defaults") / FloodP99(f, "manaloc")));

    /// <inheritdoc/>
    public override IReadOnlyList<Target> Targets =>
    [
        Target.AtLeast("throughput, saturated: manaloc / defaults", Unit.Ratio, f => f.TimesBetter("manaloc", "defaults", Load("saturated")), 1.0),
        Target.AtLeast("polite p99 under the flood: defaults / manaloc", Unit.Ratio, f => FloodP99(f, "defaults") / FloodP99(f, "manaloc"), 2),
        Target.AtMost("allocated bytes per request, saturated: manaloc / defaults", Unit.Ratio,
            f => PhaseMetric(f, "manaloc", "saturated", "allocatedBytesPerRequest") / Positive(PhaseMetric(f, "defaults", "saturated", "allocatedBytesPerRequest")), 0.8),
        Target.AtMost("RSS growth still held after the flood: manaloc / defaults", Unit.Ratio,
            f => Math.Max(0, PhaseMetric(f, "manaloc", "flood", "rssHeldMB") ?? double.NaN) / Positive(PhaseMetric(f, "defaults", "flood", "rssHeldMB")), 0.5),
        Target.AtMost("requests lost or answered with an error (not 2xx, 429 or 503), both builds, every phase", "requests", LostEverywhere, 0),
    ];

    /// <inheritdoc/>
    public override Headline Headline => new(
        new Metric("Manaloc build vs ASP.NET Core's defaults: polite p99 under one client's flood (times as short)", Unit.Ratio, f => FloodP99(f, "defaults") / FloodP99(f, "manaloc")),
        Metric.TimesBetter("throughput, saturated (1x = as fast)", "manaloc", "defaults", Load("saturated")));


    /// <summary>The phases' load and the idle wait after the flood.</summary>
    /// <param name="SaturatedSlices">
    /// The saturated phase's slices per build (even): the phase is measured in that many rounds of one short slice per
    /// build, in the harness's balanced order (AB, BA, …), so drift within the launch (tier-up finishing, the GC's state,
    /// the load generator beside the service) falls on both builds alike; each build's slices add up to one phase.
    /// </param>
    /// <param name="IdleEndsOnRelease">
    /// Whether the idle wait ends once the Manaloc build's idle release after its flood has run (both builds then read as
    /// long after their floods), with <paramref name="Idle"/> its limit; otherwise it lasts <paramref name="Idle"/>.
    /// </param>
    private sealed record Plan(int PoliteClients, int PoliteRate, int FloodConnections, int SaturatingClients, TimeSpan Phase, TimeSpan Warmup, TimeSpan Idle, TimeSpan QuietAfter, int SaturatedSlices,
        bool IdleEndsOnRelease);

    // Quick: 1 s phases, one warm-up for both builds and an idle wait that ends on the Manaloc build's idle release (within
    // 1.25 × QuietAfter of its last request, at most 3 s) keep the load of a launch (both builds) near 9 s,
    // so the three launches of a quick run, with the services' starts, fit about 35 s; the polite rate is higher than in a full run so that a phase
    // still has 600 polite latencies. The full run keeps the issue's 30 s idle wait whole.
    // QuietAfter: the Manaloc build's idle release (AddManalocIdleRelease) runs once no request has come for this long.
    // It is longer than the gap a build sees between its own phases (the other build's phase, about one phase long)
    // and shorter than the idle wait, so it runs in the idle wait and not between phases, as in a service whose
    // bursts come closer together than its quiet time; it then runs within 1.25 times it.
    private static Plan PlanFor(RunSettings settings) => settings.Pick(
        new Plan(2, 20, 4, 4, TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(0.5), TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(0.5), 2, IdleEndsOnRelease: true),
        new Plan(8, 75, 16, 16, TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(0.75), TimeSpan.FromSeconds(3), TimeSpan.FromSeconds(1.75), 4, IdleEndsOnRelease: true),
        new Plan(16, 50, 32, 32, TimeSpan.FromSeconds(15), TimeSpan.FromSeconds(5), TimeSpan.FromSeconds(30), TimeSpan.FromSeconds(20), 6, IdleEndsOnRelease: false));

    /// <inheritdoc/>
    public override IReadOnlyList<ParameterSpec> DescribeParameters(RunSettings settings)
    {
        var p = PlanFor(settings);
        return
        [
            new("load", $"quiet: {p.PoliteClients} polite clients at {p.PoliteRate}/s each (an order, then {HttpLoad.PrimeLimit:N0} primes, alternately); flood: the same beside one client on {p.FloodConnections} connections asking for primes as fast as it is answered, then {IdleText(p)} (manaloc's idle release after {p.QuietAfter.TotalSeconds:0.#} s without a request); saturated: {p.SaturatingClients} closed-loop clients; {p.Phase.TotalSeconds:0} s each; manaloc's share per client: {Share}", Phases),
            new("one-in", "polite latency percentile as 1-in-N: 2 = p50, 100 = p99, 1000 = p99.9", Percentiles.Select(x => x.OneIn.ToString(System.Globalization.CultureInfo.InvariantCulture)).ToArray()),
        ];
    }

    /// <inheritdoc/>
    /// <remarks>
    /// Both services start at once and stay up for the whole launch. After their warm-up together, the saturated phase
    /// runs in slices alternated between the builds in the harness's balanced order, so drift within the launch falls
    /// on both alike; then the quiet phase for one build and the other, then the flood likewise, the launch index
    /// choosing which build goes first. A service with no load costs the other nothing, so one build's idle wait after
    /// its flood overlaps the other's flood: the idle wait is paid about once per launch, not once per build. The quiet
    /// phase follows the saturated one, so the working set at the end of the quiet phase already holds what a busy
    /// service needs, and "RSS held" is what the flood added.
    /// </remarks>
    public override void Run(ExperimentContext context)
    {
        var plan = PlanFor(context.Settings);
        context.Status("starting the HttpApi service, both builds");
        var starts = Builds.Select(build => Task.Run(() => HttpService.Start(Name, ServeKey, build, Share, plan.QuietAfter))).ToArray();
        try
        {
            Task.WaitAll(starts, context.Cancellation);
        }
        catch
        {
            foreach (var started in starts.Where(t => t.IsCompletedSuccessfully)) started.Result.Dispose();
            throw;
        }
        var services = starts.Select(t => t.Result).ToArray();
        var rows = new Dictionary<string, List<IReadOnlyList<string>>>();
        try
        {
            RunAll(context, services, plan, rows);
        }
        finally
        {
            // Nothing is measured any more. A graceful stop only gives the note below, which the report takes from the first
            // launch: the other launches kill their services (Dispose) rather than wait for each one's drain and exit.
            var stops = context.Settings.ReportsNotesAndTables ? services.Select(service => Task.Run(service.Stop)).ToArray() : [];
            try
            {
                for (int i = 0; i < stops.Length; i++) context.Note($"{Builds[i]}: {stops[i].GetAwaiter().GetResult()}.");
            }
            finally
            {
                // Every service is disposed (its process killed if it still runs), the others too when one's stop threw.
                foreach (var service in services) service.Dispose();
            }
        }
        context.AddTable(new ResultTable("Per build and load (latency in µs from the intended send time; the service's figures are deltas over the phase)",
            ["build", "load", "p50", "p99", "p99.9", "ok/s", "flooder ok/429", "429", "503", "other", "B/request", "GCs", "GC pause ms", "RSS MB", "peak RSS MB", "RSS held MB", "GC committed held MB", "pool idle MB", "idle releases so far", "lost"],
            [.. Builds.SelectMany(b => rows.GetValueOrDefault(b) ?? [])]));
        context.Note("flooder ok/429: what the flooding client got in the flood phase (2xx answers / 429 refusals); the defaults build has no share, so it refuses nobody.");
        context.Note($"RSS held: the service's working set after the flood ({IdleText(plan)}; no load meanwhile; metrics.idleSecondsAfterFlood: how long), less its working set at the end of the quiet phase (the issue asks for 30 s: the full run waits 30 s, a quick run until the idle release).");
        context.Note("GC committed held MB: the same difference for the memory the GC has committed (GCMemoryInfo.TotalCommittedBytes: the heap with its free space and budgets), the part of \"RSS held\" that is the GC's.");
        context.Note("Idle releases so far: how many times the Manaloc build's idle release (AddManalocIdleRelease) had run when the row's figures were taken (after the idle wait for the flood); one that ran before the flood's row lowered the quiet phase's working set too, which RSS held is measured from.");
        context.Note("Pool idle MB: what Kestrel's memory pool keeps idle at the end of the phase (after the idle wait for the flood): Manaloc's BufferMemoryPool's retained bytes in the manaloc build, Kestrel's own pool's aspnetcore.memory_pool.pooled in the defaults build. Both release idle blocks on a timer (about 10 s), and what they release leaves the working set only when a GC runs.");
        context.Note("Both builds are one binary (the HttpApi service in a child lab process, --build defaults|manaloc) with the same GC settings, both running for the whole launch (loaded in turn: the saturated phase in slices alternated between them, the quiet and flood phases whole, the launch choosing which build goes first); the load generator runs in the lab's process on the same machine, so its CPU competes with the service's (the same for both builds).");
    }

    /// <summary>The idle wait after the flood, in words.</summary>
    private static string IdleText(Plan plan) => plan.IdleEndsOnRelease
        ? $"idle until manaloc's idle release has run, at most {plan.Idle.TotalSeconds:0.#} s, both builds read as long after their floods"
        : $"{plan.Idle.TotalSeconds:0.#} s idle";

    private const string ServeKey = "serve";

    /// <summary>The child's side: the HttpApi service in one build, serving until its standard input closes (its options follow the key).</summary>
    public override void RunChild(string key, IReadOnlyList<string> arguments, ExperimentContext context)
    {
        if (key != ServeKey)
        {
            base.RunChild(key, arguments, context);
            return;
        }
        int exit = HttpApi.ServiceHost.RunAsync([.. arguments]).GetAwaiter().GetResult();
        if (exit != 0) throw new InvalidOperationException($"The HttpApi service exited with code {exit} ({string.Join(' ', arguments)}).");
    }

    private static void RunAll(ExperimentContext context, HttpService[] services, Plan plan, Dictionary<string, List<IReadOnlyList<string>>> rows)
    {
        var ct = context.Cancellation;
        context.Status("both builds: warm-up");
        // Every kind of client at once, the flooder too: the code a flood runs (in the Manaloc build the client's line and
        // the 429 answers) is compiled before the quiet phase, so "RSS held" does not count the JIT's memory. Both builds
        // warm up at once: nothing is measured yet, and each still runs every path many times over in the phase.
        Task.WhenAll(services.Select(service => HttpLoad.RunAsync(service.Endpoint,
            new HttpPhaseLoad(plan.PoliteClients, plan.PoliteRate, plan.FloodConnections, plan.SaturatingClients, plan.Warmup), ct))).GetAwaiter().GetResult();
        // The launch picks which build goes first (alternating across launches), so neither always follows the warm-up.
        int first = context.Settings.Launch % services.Length;
        int[] order = [.. Enumerable.Range(0, services.Length).Select(k => (first + k) % services.Length)];
        Saturated(context, services, plan, rows, first);
        QuietAndFloodAsync(context, services, plan, rows, order).GetAwaiter().GetResult();
    }

    /// <summary>
    /// The saturated phase in slices, one per build per round in the harness's balanced order (<see cref="Rounds.Interleave"/>),
    /// on the calling thread (each slice's load runs on the pool while this thread waits for it).
    /// </summary>
    private static void Saturated(ExperimentContext context, HttpService[] services, Plan plan, Dictionary<string, List<IReadOnlyList<string>>> rows, int first)
    {
        var ct = context.Cancellation;
        var slice = plan.Phase / plan.SaturatedSlices;
        var load = new HttpPhaseLoad(0, 1, 0, plan.SaturatingClients, slice);
        var results = services.Select(_ => new List<HttpLoadResult>()).ToArray();
        var spans = services.Select(_ => new List<(HttpServiceStats Before, HttpServiceStats After)>()).ToArray();
        var merged = Rounds.Interleave(services.Length, plan.SaturatedSlices, ct, (v, round) =>
        {
            int i = (first + v) % services.Length;
            context.Status($"{Builds[i]}: saturated, slice {round + 1} of {plan.SaturatedSlices}");
            var before = services[i].StatsAsync(ct).GetAwaiter().GetResult();
            var result = HttpLoad.RunAsync(services[i].Endpoint, load, ct).GetAwaiter().GetResult();
            var after = services[i].StatsAsync(ct).GetAwaiter().GetResult();
            results[i].Add(result);
            spans[i].Add((before, after));
            return new Measurement { Variant = Builds[i], Unit = "ok/s", LowerIsBetter = false, Statistics = Statistics.From([result.OkPerSecond]) };
        });
        for (int v = 0; v < services.Length; v++)
        {
            int i = (first + v) % services.Length;
            // Rounds.Merge fills the per-operation figures of a timed body; an ok/s figure has none.
            var slices = merged[v] with { NsPerOp = null, OpsPerSecond = null, AllocatedBytesPerOp = null };
            Record(context, Builds[i], "saturated", HttpLoadResult.Combine(results[i]), spans[i], null, Row(rows, Builds[i]), saturated: slices);
        }
    }

    /// <summary>The quiet phase for each build in <paramref name="order"/>, then the flood in the same order, then each flood's idle wait.</summary>
    private static async Task QuietAndFloodAsync(ExperimentContext context, HttpService[] services, Plan plan, Dictionary<string, List<IReadOnlyList<string>>> rows, int[] order)
    {
        var ct = context.Cancellation;
        var quietEnd = new HttpServiceStats?[services.Length];
        var floods = new (HttpLoadResult Load, HttpServiceStats Before, HttpServiceStats After, long EndedAt)[services.Length];
        foreach (string phase in (string[])["quiet", "flood"])
        {
            foreach (int i in order)
            {
                string build = Builds[i];
                context.Status($"{build}: {phase}");
                var load = phase == "quiet"
                    ? new HttpPhaseLoad(plan.PoliteClients, plan.PoliteRate, 0, 0, plan.Phase)
                    : new HttpPhaseLoad(plan.PoliteClients, plan.PoliteRate, plan.FloodConnections, 0, plan.Phase);
                var before = await services[i].StatsAsync(ct).ConfigureAwait(false);
                var result = await HttpLoad.RunAsync(services[i].Endpoint, load, ct).ConfigureAwait(false);
                var after = await services[i].StatsAsync(ct).ConfigureAwait(false);
                if (phase == "flood")
                {
                    floods[i] = (result, before, after, LabClock.Now);
                    continue; // recorded once its idle wait is over
                }
                quietEnd[i] = after;
                Record(context, build, phase, result, [(before, after)], null, Row(rows, build));
            }
        }
        // In a quick run the idle wait ends on what it waits for: the Manaloc build's idle release after its flood, which the service
        // announces on a line of its output (asking /stats would be the request that ends the quiet), at most the plan's
        // idle time after that flood. Every build is then read as long after its own flood as the release came after the
        // Manaloc build's, so neither build is read sooner after its flood than the other.
        int manaloc = Array.IndexOf(Builds, "manaloc");
        var idleFor = plan.Idle;
        if (plan.IdleEndsOnRelease)
        {
            context.Status($"manaloc: idle until its idle release (at most {plan.Idle.TotalSeconds:0.#} s after the flood)");
            if (await services[manaloc].IdleReleaseAsync(floods[manaloc].After.IdleReleases, plan.Idle - LabClock.Since(floods[manaloc].EndedAt), ct).ConfigureAwait(false))
                idleFor = LabClock.Since(floods[manaloc].EndedAt);
            else
                context.Note($"manaloc: no idle release within {plan.Idle.TotalSeconds:0.#} s of its flood; both builds were read that long after theirs.");
        }
        // In flood order, so each build's wait runs from its own flood's end.
        foreach (int i in order)
        {
            var left = idleFor - LabClock.Since(floods[i].EndedAt);
            context.Status($"{Builds[i]}: idle {idleFor.TotalSeconds:0.#} s after the flood");
            if (left > TimeSpan.Zero) await Task.Delay(left, ct).ConfigureAwait(false);
            var idle = await services[i].StatsAsync(ct).ConfigureAwait(false);
            double idleSeconds = LabClock.Since(floods[i].EndedAt).TotalSeconds;
            var baseline = quietEnd[i] ?? floods[i].Before;
            double heldMB = (idle.WorkingSet - baseline.WorkingSet) / 1e6;
            double gcHeldMB = (idle.GcCommittedBytes - baseline.GcCommittedBytes) / 1e6;
            Record(context, Builds[i], "flood", floods[i].Load, [(floods[i].Before, floods[i].After)], heldMB, Row(rows, Builds[i]), idle.PoolIdleBytes / 1e6, gcHeldMB, idle, idleSeconds: idleSeconds);
        }
    }

    private static List<IReadOnlyList<string>> Row(Dictionary<string, List<IReadOnlyList<string>>> rows, string build)
    {
        if (!rows.TryGetValue(build, out var list)) rows[build] = list = [];
        return list;
    }

    /// <summary>Records one build's phase; <paramref name="spans"/> are the service's figures around each part of it (the saturated phase's slices), its deltas summed over them.</summary>
    private static void Record(ExperimentContext context, string build, string phase, HttpLoadResult load, IReadOnlyList<(HttpServiceStats Before, HttpServiceStats After)> spans,
        double? heldMB, List<IReadOnlyList<string>> rows, double? poolIdleAfterWaitMB = null, double? gcHeldMB = null, HttpServiceStats? idleAfterWait = null, Measurement? saturated = null,
        double? idleSeconds = null)
    {
        var after = spans[^1].After;
        // The stats requests themselves are served too (two per span, one counted inside it): not counted as load.
        long served = Math.Max(1, spans.Sum(s => s.After.Served - s.Before.Served - 1));
        double bytesPerRequest = spans.Sum(s => (double)(s.After.AllocatedBytes - s.Before.AllocatedBytes)) / served;
        int gcCount = spans.Sum(s => s.After.GcCount - s.Before.GcCount);
        double gcPauseMs = spans.Sum(s => s.After.GcPauseMs - s.Before.GcPauseMs);
        long tooMany = load.Polite.TooMany + load.Flooder.TooMany + load.Saturating.TooMany;
        long unavailable = load.Polite.Unavailable + load.Flooder.Unavailable + load.Saturating.Unavailable;
        long other = load.Polite.OtherStatus + load.Flooder.OtherStatus + load.Saturating.OtherStatus;
        var metrics = new Dictionary<string, double>
        {
            ["okPerSecond"] = load.OkPerSecond,
            ["sent"] = load.Sent,
            ["lost"] = load.Lost,
            ["tooMany"] = tooMany,
            ["unavailable"] = unavailable,
            ["otherStatus"] = other,
            ["flooderOk"] = load.Flooder.Ok,
            ["flooderTooMany"] = load.Flooder.TooMany,
            ["allocatedBytesPerRequest"] = bytesPerRequest,
            ["gcCount"] = gcCount,
            ["gcPauseMs"] = gcPauseMs,
            ["rssMB"] = after.WorkingSet / 1e6,
            ["peakRssMB"] = after.PeakWorkingSet / 1e6,
            ["poolRents"] = spans.Sum(s => s.After.PoolRents - s.Before.PoolRents),
            ["poolOutstanding"] = after.PoolOutstanding,
            ["sendLagP99Micros"] = load.SendLagP99Micros,
        };
        if (heldMB is { } held) metrics["rssHeldMB"] = held;
        if (gcHeldMB is { } gcHeld) metrics["gcCommittedHeldMB"] = gcHeld;
        if (idleSeconds is { } idled) metrics["idleSecondsAfterFlood"] = idled;
        metrics["idleReleasesSoFar"] = (idleAfterWait ?? after).IdleReleases;
        metrics["poolIdleMB"] = poolIdleAfterWaitMB ?? after.PoolIdleBytes / 1e6;
        if (load.Sent != load.Lost + load.Polite.Answered + load.Flooder.Answered + load.Saturating.Answered)
            context.Note($"{build}, {phase}: the load generator's accounting does not add up (sent {load.Sent}).");
        var latencies = load.Polite.LatencyMicros.Order().ToArray();
        double Percentile(double p) => latencies.Length == 0 ? double.NaN : latencies[Math.Min(latencies.Length - 1, (int)Math.Ceiling(latencies.Length * p / 100) - 1)];
        if (phase == "saturated")
        {
            // The slices' ok/s as its samples (their median the figure), from the harness's merge of the rounds.
            context.Record((saturated ?? throw new ArgumentException("The saturated phase is recorded from its slices.", nameof(saturated)))
                with { Parameters = Parameters.Of(("load", phase)), Metrics = metrics });
        }
        else
        {
            foreach (var (oneIn, percentile) in Percentiles)
            {
                double micros = Percentile(percentile);
                if (!double.IsFinite(micros)) continue; // nothing answered: no percentile, so the targets read "not measured"
                context.RecordSamples(build, Unit.Microseconds, [micros], Parameters.Of(("load", phase), ("one-in", oneIn)), metrics: metrics);
            }
        }
        string Us(double v) => double.IsFinite(v) && phase != "saturated" ? v.ToString("0", CultureInfo.InvariantCulture) : "–";
        rows.Add([build, phase, Us(Percentile(50)), Us(Percentile(99)), Us(Percentile(99.9)), Format.Significant(load.OkPerSecond),
            phase == "flood" ? $"{load.Flooder.Ok}/{load.Flooder.TooMany}" : "–", tooMany.ToString(CultureInfo.InvariantCulture), unavailable.ToString(CultureInfo.InvariantCulture), other.ToString(CultureInfo.InvariantCulture), Format.Significant(bytesPerRequest),
            gcCount.ToString(CultureInfo.InvariantCulture), gcPauseMs.ToString("0.#", CultureInfo.InvariantCulture),
            (after.WorkingSet / 1e6).ToString("0", CultureInfo.InvariantCulture), (after.PeakWorkingSet / 1e6).ToString("0", CultureInfo.InvariantCulture),
            heldMB is { } h ? h.ToString("0.#", CultureInfo.InvariantCulture) : "–", gcHeldMB is { } g ? g.ToString("0.#", CultureInfo.InvariantCulture) : "–", (poolIdleAfterWaitMB ?? after.PoolIdleBytes / 1e6).ToString("0.##", CultureInfo.InvariantCulture),
            (idleAfterWait ?? after).IdleReleases.ToString(CultureInfo.InvariantCulture), load.Lost.ToString(CultureInfo.InvariantCulture)]);
    }

    private static Func<Measurement, bool> Load(string load) => m => m.Parameters.Is("load", load);

    /// <summary>A build's polite p99 under the flood in µs (at least 1); null when not recorded.</summary>
    private static double? FloodP99(Figures f, string build) => f.Median(build, m => Load("flood")(m) && m.Parameters.Is("one-in", 100)) is { } p ? Math.Max(p, 1) : null;

    private static double? PhaseMetric(Figures f, string build, string load, string key)
        => f.Value(build, m => m.Metrics.TryGetValue(key, out double v) ? v : null, Load(load));

    private static double? Positive(double? value) => value > 0 ? value : null;

    /// <summary>Requests lost or answered with an error over both builds and every phase; null unless every phase of both was recorded.</summary>
    private static double? LostEverywhere(Figures f)
    {
        double total = 0;
        foreach (string build in Builds)
        {
            foreach (string phase in Phases)
            {
                if (PhaseMetric(f, build, phase, "lost") is not { } lost || PhaseMetric(f, build, phase, "otherStatus") is not { } failed) return null;
                total += lost + failed;
            }
        }
        return total;
    }
}
