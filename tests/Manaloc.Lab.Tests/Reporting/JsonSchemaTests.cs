using System.Text.Json;
using Manaloc.Lab.Harness;
using Manaloc.Lab.Reporting;

namespace Manaloc.Lab.Tests.Reporting;

public sealed class JsonSchemaTests
{
    internal static LabReport Sample() => new()
    {
        StartedAt = new DateTimeOffset(2026, 11, 22, 1, 2, 3, TimeSpan.Zero),
        Mode = RunMode.Quick,
        Machine = MachineInfo.Current(),
        Experiments =
        [
            new ExperimentResult
            {
                Experiment = "demo",
                Article = "An article (seed 000)",
                Description = "demo experiment",
                ArticleFigure = new ArticleFigure("1035 ms → 9 ms", 115, "x"),
                Baseline = "old",
                Variants = ["old", "new"],
                Parameters = [new ParameterSpec("threads", "thread count", ["1", "2"])],
                SweepParameter = "threads",
                Measurements =
                [
                    new Measurement
                    {
                        Variant = "old", Unit = "ns/op", Statistics = Statistics.From([10.0, 12.0, 11.0]),
                        Parameters = Parameters.Of(("threads", 1)), OperationsPerSample = 1000, NsPerOp = 11, OpsPerSecond = 9.09e7,
                        AllocatedBytes = 32000, AllocatedBytesPerOp = 32, Gc = new GcCounts { Gen0 = 3, Gen1 = 2, Gen2 = 1 },
                        GcPauseMs = 1.5, LockContentions = 7, PeakWorkingSetBytes = 123456789, RatioToBaseline = 1,
                        Metrics = new Dictionary<string, double> { ["received"] = 99, ["inf"] = double.PositiveInfinity },
                        Placement = new Placement { ThreadCpus = [[0], [1, 0]], SharedCpu = false, SmtSiblings = false, Moved = true },
                        Launches = [new LaunchFigures(0, 2, 11) { AllocatedBytesPerOp = 32 }, new LaunchFigures(1, 1, 11) { Placement = new Placement { ThreadCpus = [[1], [1]], SharedCpu = true } }],
                    },
                    new Measurement
                    {
                        Variant = "new", Unit = "ns/op", Statistics = Statistics.From([1.0]), Parameters = Parameters.Of(("threads", 1)),
                        RatioToBaseline = 1 / 11.0, Threads = 1,
                    },
                ],
                Headline = new HeadlineResult(
                    new HeadlineFigure("new vs old, time per call (times as fast)", 11, Unit.Ratio) { Low = 10, High = 12.5 },
                    [new HeadlineFigure("weakest path, the same", null, Unit.Ratio)]),
                Verdict = new VerdictResult(Verdict.Holds, "new 11x faster", 11, "x")
                {
                    Targets = [TargetResult.AtLeast("new vs pool", 11, 2) with { Best = 12, Launches = [new LaunchEstimate(0, 11, 10, 12)], Floor = new FloorResult("new vs the floor", 0.97, 0.95, 0.99, 0.95) }, TargetResult.AtMost("peak memory", double.NaN, 5, "%"), TargetResult.AtMost("longest step", 0.02, 0.01) with { Floor = new FloorResult("longest step vs the floor", 1.02, 1.01, 1.04, 1.05, "≤") }],
                    Launches = [new LaunchEstimate(0, 11, 10, 12) { Placement = "old: CPUs 0|1" }, new LaunchEstimate(1, null, double.NaN, double.NaN)],
                },
                Launches = 2,
                Notes = ["a note"],
                Tables = [new ResultTable("layout", ["field", "offset"], [["A", "0"], ["B", "8"]])],
                ElapsedSeconds = 1.25,
            },
        ],
    };

    [Fact]
    public void Report_round_trips_through_json_unchanged()
    {
        var report = Sample();
        string json = ReportWriter.ToJson(report);
        var back = ReportWriter.FromJson(json);
        Assert.Equal(json, ReportWriter.ToJson(back));
        var (sent, read) = (report.Experiments[0].Measurements[0].Statistics, back.Experiments[0].Measurements[0].Statistics);
        Assert.Equal(sent with { Samples = [] }, read with { Samples = [] });
        Assert.Equal(sent.Samples, read.Samples); // the bootstrap resamples them: they must survive the trip, in order
        Assert.Equal(report.Machine, back.Machine);
        Assert.Equal(2, back.Experiments[0].Launches);
        Assert.Equal(Verdict.Holds, back.Experiments[0].Verdict.Verdict);
        // Records compare lists by reference: compare the launches apart.
        Assert.Equal(report.Experiments[0].Verdict.Targets.Select(t => t with { Launches = [] }), back.Experiments[0].Verdict.Targets.Select(t => t with { Launches = [] }));
        Assert.Equal(report.Experiments[0].Verdict.Targets[0].Launches, back.Experiments[0].Verdict.Targets[0].Launches);
        Assert.Equal(report.Experiments[0].Verdict.Launches, back.Experiments[0].Verdict.Launches);
        Assert.Equal([2, 1], back.Experiments[0].Measurements[0].Launches.Select(l => l.SampleCount));
        Assert.Equal([1, 0], back.Experiments[0].Measurements[0].Placement!.ThreadCpus[1]);
    }

    [Fact]
    public void Targets_serialize_their_judgement()
    {
        using var doc = JsonDocument.Parse(ReportWriter.ToJson(Sample()));
        var targets = doc.RootElement.GetProperty("experiments")[0].GetProperty("verdict").GetProperty("targets");
        Assert.Equal(3, targets.GetArrayLength());
        foreach (string field in new[] { "name", "today", "comparison", "goal", "unit", "best", "met" })
            Assert.True(targets[0].TryGetProperty(field, out _), field);
        Assert.True(targets[0].GetProperty("met").GetBoolean());
        Assert.Equal(JsonValueKind.Null, targets[1].GetProperty("today").ValueKind); // NaN is "not measured", not a number
        Assert.Equal(JsonValueKind.Null, targets[1].GetProperty("met").ValueKind);
        // A lower-is-better target's floor keeps its direction: at the floor at or below 1.05x of it.
        var floor = targets[2].GetProperty("floor");
        Assert.Equal("≤", floor.GetProperty("comparison").GetString());
        Assert.True(floor.GetProperty("reached").GetBoolean());
        Assert.True(targets[2].GetProperty("atFloor").GetBoolean());
        Assert.Equal("≥", targets[0].GetProperty("floor").GetProperty("comparison").GetString());
    }

    [Fact]
    public void Json_has_every_documented_field()
    {
        using var doc = JsonDocument.Parse(ReportWriter.ToJson(Sample()));
        var root = doc.RootElement;
        foreach (string field in new[] { "schemaVersion", "startedAt", "mode", "machine", "experiments" })
            Assert.True(root.TryGetProperty(field, out _), field);
        foreach (string field in new[] { "os", "architecture", "runtime", "processorCount", "affinityProcessors", "affinityMask", "gcMode", "gcLatencyMode", "totalAvailableMemoryBytes", "ci" })
            Assert.True(root.GetProperty("machine").TryGetProperty(field, out _), field);
        var e = root.GetProperty("experiments")[0];
        foreach (string field in new[] { "experiment", "article", "description", "articleFigure", "baseline", "variants", "parameters", "sweepParameter", "measurements", "headline", "verdict", "notes", "tables", "error", "elapsedSeconds" })
            Assert.True(e.TryGetProperty(field, out _), field);
        var headline = e.GetProperty("headline");
        foreach (string field in new[] { "name", "value", "unit", "low", "high" })
            Assert.True(headline.GetProperty("figure").TryGetProperty(field, out _), field);
        Assert.Equal(11, headline.GetProperty("figure").GetProperty("value").GetDouble());
        Assert.Equal("x", headline.GetProperty("figure").GetProperty("unit").GetString());
        Assert.Equal(JsonValueKind.Null, headline.GetProperty("beside")[0].GetProperty("value").ValueKind);
        Assert.Equal("holds", e.GetProperty("verdict").GetProperty("verdict").GetString());
        var m = e.GetProperty("measurements")[0];
        foreach (string field in new[] { "variant", "parameters", "threads", "unit", "lowerIsBetter", "statistics", "operationsPerSample", "nsPerOp", "opsPerSecond", "allocatedBytesPerOp", "allocatedBytes", "gc", "gcPauseMs", "lockContentions", "peakWorkingSetBytes", "ratioToBaseline", "metrics" })
            Assert.True(m.TryGetProperty(field, out _), field);
        foreach (string field in new[] { "count", "median", "mean", "min", "max", "stdDev", "p90", "p99" })
            Assert.True(m.GetProperty("statistics").TryGetProperty(field, out _), field);
        Assert.False(m.TryGetProperty("parameterKey", out _));
        Assert.Equal("Infinity", m.GetProperty("metrics").GetProperty("inf").GetString());
    }

    [Fact]
    public void Schema_document_names_every_field()
    {
        string doc = File.ReadAllText(Path.Combine(RepoRoot(), "docs", "results-schema.md"));
        using var json = JsonDocument.Parse(ReportWriter.ToJson(Sample()));
        foreach (string name in FieldNames(json.RootElement).Distinct())
        {
            if (name is "received" or "inf") continue; // sample metric names, not schema fields
            Assert.True(doc.Contains($"`{name}`", StringComparison.Ordinal), $"docs/results-schema.md does not describe `{name}`");
        }
    }

    private static IEnumerable<string> FieldNames(JsonElement e)
    {
        if (e.ValueKind == JsonValueKind.Object)
        {
            foreach (var p in e.EnumerateObject())
            {
                yield return p.Name;
                foreach (var n in FieldNames(p.Value)) yield return n;
            }
        }
        else if (e.ValueKind == JsonValueKind.Array)
        {
            foreach (var item in e.EnumerateArray())
                foreach (var n in FieldNames(item)) yield return n;
        }
    }

    internal static string RepoRoot()
    {
        var dir = new DirectoryInfo(AppContext.BaseDirectory);
        while (dir is not null && !File.Exists(Path.Combine(dir.FullName, "Manaloc.slnx"))) dir = dir.Parent;
        return dir?.FullName ?? throw new DirectoryNotFoundException("Manaloc.slnx not found above the test folder.");
    }
}
