using Manaloc.Lab.Experiments;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Experiments;

/// <summary>The http experiment's claim and targets on known figures: what each reads, and that a missing figure is not measured rather than met.</summary>
public sealed class HttpTests
{
    private static Dictionary<string, double> Metrics(double allocated, double held = 0, double lost = 0, double failed = 0) => new()
    {
        ["allocatedBytesPerRequest"] = allocated,
        ["rssHeldMB"] = held,
        ["lost"] = lost,
        ["otherStatus"] = failed,
    };

    private static Measurement P99(string build, string load, double micros, Dictionary<string, double> metrics) => new()
    {
        Variant = build,
        Unit = "µs",
        Statistics = Statistics.From([micros, micros, micros]), // more than one sample: a figure measured once is only reported, never judged
        Parameters = Parameters.Of(("load", load), ("one-in", 100)),
        Metrics = metrics,
    };

    private static Measurement Saturated(string build, double okPerSecond, double allocated) => new()
    {
        Variant = build,
        Unit = "ok/s",
        LowerIsBetter = false,
        Statistics = Statistics.From([okPerSecond, okPerSecond, okPerSecond]),
        Parameters = Parameters.Of(("load", "saturated")),
        Metrics = Metrics(allocated),
    };

    /// <summary>Flood p99 defaults 3000 µs, manaloc 1000 µs; saturated 1000 vs 1200 ok/s, 2500 vs 1500 B/request; RSS held 10 vs 2 MB.</summary>
    private static List<Measurement> Run(double manalocFailed = 0) =>
    [
        P99("defaults", "quiet", 500, Metrics(2500)), P99("defaults", "flood", 3000, Metrics(2500, held: 10)), Saturated("defaults", 1000, 2500),
        P99("manaloc", "quiet", 500, Metrics(1500, failed: manalocFailed)), P99("manaloc", "flood", 1000, Metrics(1500, held: 2)), Saturated("manaloc", 1200, 1500),
    ];

    private static TargetResult Target(VerdictResult verdict, string name) => Assert.Single(verdict.Targets, t => t.Name.StartsWith(name, StringComparison.Ordinal));

    [Fact]
    public void The_claim_and_the_five_targets_read_the_builds_figures()
    {
        var verdict = new Http().Judge(Run());
        Assert.Equal(3.0, verdict.TodayValue!.Value, 9);
        Assert.Equal(5, verdict.Targets.Count);
        Assert.Equal((1.2, true), (Math.Round(Target(verdict, "throughput").Today!.Value, 9), Target(verdict, "throughput").Met!.Value));
        Assert.Equal((3.0, true), (Target(verdict, "polite p99 under the flood").Today!.Value, Target(verdict, "polite p99 under the flood").Met!.Value));
        Assert.Equal((0.6, true), (Target(verdict, "allocated bytes").Today!.Value, Target(verdict, "allocated bytes").Met!.Value));
        Assert.Equal((0.2, true), (Target(verdict, "RSS growth").Today!.Value, Target(verdict, "RSS growth").Met!.Value));
        Assert.Equal((0.0, true), (Target(verdict, "requests lost").Today!.Value, Target(verdict, "requests lost").Met!.Value));
    }

    [Fact]
    public void An_error_answer_anywhere_misses_the_lost_target()
    {
        var lost = Target(new Http().Judge(Run(manalocFailed: 4)), "requests lost");
        Assert.Equal((4.0, false), (lost.Today!.Value, lost.Met!.Value));
    }

    [Fact]
    public void A_phase_not_recorded_leaves_its_targets_not_measured_rather_than_met()
    {
        var verdict = new Http().Judge(Run().Where(m => !(m.Variant == "manaloc" && m.Parameters["load"] == "flood")).ToList());
        foreach (string name in new[] { "polite p99 under the flood", "RSS growth", "requests lost" })
        {
            Assert.Equal("not measured", Target(verdict, name).MetWord());
        }
        Assert.True(Target(verdict, "throughput").Met);
    }

    [Fact]
    public void A_sliced_phase_combines_into_one_with_every_request_and_the_whole_time()
    {
        static HttpTally Tally(long ok, long lost, params double[] latencies)
        {
            var tally = new HttpTally { Sent = ok + lost, Ok = ok, Lost = lost };
            tally.LatencyMicros.AddRange(latencies);
            return tally;
        }
        var first = new HttpLoadResult(Tally(0, 0), Tally(0, 0), Tally(300, 1), TimeSpan.FromSeconds(0.25), 0);
        var second = new HttpLoadResult(Tally(2, 0, 10, 20), Tally(0, 0), Tally(100, 0), TimeSpan.FromSeconds(0.75), 7);

        var combined = HttpLoadResult.Combine([first, second]);

        Assert.Equal(400, combined.Saturating.Ok);
        Assert.Equal(1, combined.Lost);
        Assert.Equal(403, combined.Sent);
        Assert.Equal(TimeSpan.FromSeconds(1), combined.Elapsed);
        Assert.Equal(402, combined.OkPerSecond, 6); // every slice's answers over the slices' time, not an average of their rates
        Assert.Equal([10.0, 20.0], combined.Polite.LatencyMicros);
        Assert.Equal(7, combined.SendLagP99Micros);
        Assert.Throws<ArgumentException>(() => HttpLoadResult.Combine([]));
    }
}
