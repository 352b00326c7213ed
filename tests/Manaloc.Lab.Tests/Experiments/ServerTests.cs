using Manaloc.Lab.Experiments;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Experiments;

/// <summary>The server experiment's declared claim and targets on known figures: what each reads, and that a missing figure is not measured rather than met.</summary>
public sealed class ServerTests
{
    private static Dictionary<string, double> Metrics(double allocated, double rssMB, double lost = 0) => new()
    {
        ["okPerSecond"] = 1000,
        ["allocatedBytesPerRequest"] = allocated,
        ["peakRssMB"] = rssMB,
        ["lost"] = lost,
        ["capMB"] = 100,
    };

    private static Measurement P99(string build, string load, double micros, Dictionary<string, double> metrics) => new()
    {
        Variant = build,
        Unit = "µs",
        Statistics = Statistics.From([micros, micros, micros]),
        Parameters = Parameters.Of(("load", load), ("one-in", 100)),
        Metrics = metrics,
    };

    private static Measurement Saturated(string build, double okPerSecond, double lost = 0) => new()
    {
        Variant = build,
        Unit = "ok/s",
        LowerIsBetter = false,
        Statistics = Statistics.From([okPerSecond, okPerSecond, okPerSecond]),
        Parameters = Parameters.Of(("load", "saturated")),
        Metrics = Metrics(0, 0, lost),
    };

    /// <summary>Every build and phase: flood p99 manaloc 200 µs, bcl 2000 µs, kestrel 400 µs, kestrel-manaloc 250 µs; quiet B/request bcl 1000, manaloc 50; RSS 40 → 70 MB of a 100 MB bound; saturated kestrel 1000/s, kestrel-manaloc 1100/s.</summary>
    private static List<Measurement> Run(double bclLost = 0) =>
    [
        P99("manaloc", "quiet", 100, Metrics(50, 40)), P99("manaloc", "flood", 200, Metrics(50, 70)), Saturated("manaloc", 900),
        P99("bcl", "quiet", 100, Metrics(1000, 40)), P99("bcl", "flood", 2000, Metrics(1000, 90, bclLost)), Saturated("bcl", 700),
        P99("kestrel", "quiet", 100, Metrics(800, 60)), P99("kestrel", "flood", 400, Metrics(800, 80)), Saturated("kestrel", 1000),
        P99("kestrel-manaloc", "quiet", 100, Metrics(800, 60)), P99("kestrel-manaloc", "flood", 250, Metrics(800, 80)), Saturated("kestrel-manaloc", 1100),
    ];

    private const string KestrelFlood = "polite p99 under the flood: kestrel / manaloc";
    private const string Throughput = "throughput without the flood (saturated): manaloc / kestrel";
    private const string KestrelManalocFlood = "polite p99 under the flood: kestrel / kestrel-manaloc";
    private const string KestrelManalocThroughput = "throughput without the flood (saturated): kestrel-manaloc / kestrel";

    private static TargetResult Target(VerdictResult verdict, string name) => Assert.Single(verdict.Targets, t => t.Name.StartsWith(name, StringComparison.Ordinal));

    [Fact]
    public void The_claim_and_the_eight_targets_read_the_builds_figures()
    {
        var verdict = new Server().Judge(Run());
        Assert.Equal((Verdict.Holds, 10.0), (verdict.Verdict, verdict.TodayValue!.Value)); // bcl 2000 µs ÷ manaloc 200 µs
        Assert.Equal(8, verdict.Targets.Count);
        Assert.Equal((10.0, true), (Target(verdict, "polite p99 under the flood: bcl").Today!.Value, Target(verdict, "polite p99 under the flood: bcl").Met!.Value));
        Assert.Equal((2.0, true), (Target(verdict, KestrelFlood).Today!.Value, Target(verdict, KestrelFlood).Met!.Value));
        Assert.Equal((0.9, true), (Target(verdict, Throughput).Today!.Value, Target(verdict, Throughput).Met!.Value));
        Assert.Equal((1.6, true), (Target(verdict, KestrelManalocFlood).Today!.Value, Target(verdict, KestrelManalocFlood).Met!.Value)); // 400 ÷ 250 µs
        Assert.Equal(1.1, Target(verdict, KestrelManalocThroughput).Today!.Value, 9);
        Assert.True(Target(verdict, KestrelManalocThroughput).Met);
        Assert.Equal((20.0, true), (Target(verdict, "allocated bytes").Today!.Value, Target(verdict, "allocated bytes").Met!.Value));
        Assert.Equal(30.0, Target(verdict, "manaloc peak RSS growth").Today!.Value, 9); // 30 MB of a 100 MB bound, in %
        Assert.Equal((0.0, true), (Target(verdict, "requests lost").Today!.Value, Target(verdict, "requests lost").Met!.Value));
    }

    [Fact]
    public void A_lost_request_anywhere_misses_the_target()
    {
        var lost = Target(new Server().Judge(Run(bclLost: 3)), "requests lost");
        Assert.Equal((3.0, false), (lost.Today!.Value, lost.Met!.Value));
    }

    [Fact]
    public void A_phase_not_recorded_leaves_its_targets_not_measured_rather_than_met()
    {
        // manaloc's flood: no polite request answered, so nothing was recorded for it.
        var verdict = new Server().Judge(Run().Where(m => !(m.Variant == "manaloc" && m.Parameters["load"] == "flood")).ToList());
        Assert.Equal(Verdict.NotComparable, verdict.Verdict);
        foreach (string name in new[] { "polite p99 under the flood: bcl", KestrelFlood, "manaloc peak RSS growth", "requests lost" })
        {
            Assert.Equal("not measured", Target(verdict, name).MetWord());
        }
        Assert.True(Target(verdict, Throughput).Met); // the saturated phase was still measured
        Assert.True(Target(verdict, KestrelManalocFlood).Met); // the other builds' floods were
    }
}
