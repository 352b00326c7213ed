using System.Reflection;
using System.Text.Json;
using System.Text.Json.Serialization;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Harness;

/// <summary>
/// A child's hand-written result line is the serializer's JSON, byte for byte, and the parent reads it back whole:
/// every property set, NaN and infinities, nulls, empty lists, typed parameters, text the encoder escapes.
/// </summary>
public sealed class ChildOutputJsonTests
{
    public static TheoryData<string> Outputs() => new(Samples.Keys);

    [Theory]
    [MemberData(nameof(Outputs))]
    public void The_writer_writes_what_the_serializer_writes(string name)
    {
        var output = Samples[name];
        Assert.Equal(JsonSerializer.Serialize(output, LabJson.CompactOptions), ChildOutputJson.Write(output));
    }

    [Theory]
    [MemberData(nameof(Outputs))]
    public void The_parent_reads_the_result_line_back_whole(string name)
    {
        var output = Samples[name];
        string json = ChildOutputJson.Write(output);
        string line = ChildProcess.FormatResultLine(output);
        Assert.Equal(ChildProcess.Marker + json, line);
        var back = ChildOutputJson.Read(line.AsSpan(ChildProcess.Marker.Length))!; // as the parent reads it
        Assert.Equal(json, ChildOutputJson.Write(back)); // nothing lost: NaN, infinities, nulls and typed parameters survive
        // The generated reader gives what the serializer's run-time code gives.
        var bySerializer = JsonSerializer.Deserialize<ChildOutput>(line.AsSpan(ChildProcess.Marker.Length), LabJson.Options)!;
        Assert.Equal(ChildOutputJson.Write(bySerializer), ChildOutputJson.Write(back));
        Assert.Equal(output.Measurements.Count, back.Measurements.Count);
        for (int i = 0; i < output.Measurements.Count; i++)
        {
            Assert.Equal(Typed(output.Measurements[i].Parameters), Typed(back.Measurements[i].Parameters)); // each as the type it was given in
            Assert.Equal(output.Measurements[i].Unit, back.Measurements[i].Unit);
            Assert.Equal(output.Measurements[i].Statistics.P99, back.Measurements[i].Statistics.P99); // NaN equals NaN here
        }
    }

    private static IEnumerable<(string, ParameterKind, string)> Typed(Parameters parameters)
        => parameters.Select(p => (p.Key, p.Value.Kind, p.Value.ToString())).ToArray();

    [Fact]
    public void Named_literals_stand_for_NaN_and_the_infinities()
    {
        string json = ChildOutputJson.Write(Samples["every property set"]);
        Assert.Contains("\"p99\":\"NaN\"", json, StringComparison.Ordinal);
        Assert.Contains("\"up\":\"Infinity\"", json, StringComparison.Ordinal);
        Assert.Contains("\"down\":\"-Infinity\"", json, StringComparison.Ordinal);
    }

    /// <summary>
    /// Every serialized property of every type in a child's result appears in the full sample's JSON, in the object of its
    /// type: a property added later must be set in the sample (and the byte-for-byte test then needs the writer to write it).
    /// </summary>
    [Fact]
    public void The_full_sample_sets_every_property_of_every_type_in_a_result()
    {
        using var document = JsonDocument.Parse(ChildOutputJson.Write(Samples["every property set"]));
        var root = document.RootElement;
        var measurement = root.GetProperty("measurements")[0];
        var objects = new (Type Type, JsonElement Json)[]
        {
            (typeof(ChildOutput), root),
            (typeof(Measurement), measurement),
            (typeof(GcCounts), measurement.GetProperty("gc")),
            (typeof(Statistics), measurement.GetProperty("statistics")),
            (typeof(Placement), measurement.GetProperty("placement")),
            (typeof(LaunchFigures), measurement.GetProperty("launches")[0]),
            (typeof(Placement), measurement.GetProperty("launches")[0].GetProperty("placement")),
            (typeof(ResultTable), root.GetProperty("tables")[0]),
            (typeof(MachineInfo), root.GetProperty("machine")),
        };
        foreach (var (type, json) in objects)
        {
            var expected = type.GetProperties(BindingFlags.Public | BindingFlags.Instance)
                .Where(p => p.GetCustomAttribute<JsonIgnoreAttribute>() is null)
                .Select(p => JsonNamingPolicy.CamelCase.ConvertName(p.Name))
                .Order(StringComparer.Ordinal);
            Assert.Equal(expected, json.EnumerateObject().Select(p => p.Name).Order(StringComparer.Ordinal));
            foreach (var property in json.EnumerateObject())
            {
                // Set means not null, 0 or empty, which would not show that the writer writes the value (a flag is either:
                // the full sample and the sparse one between them give each flag both values).
                Assert.False(
                    property.Value.ValueKind is JsonValueKind.Null
                    || property.Value.ValueKind == JsonValueKind.Number && property.Value.GetDouble() == 0
                    || property.Value.ValueKind == JsonValueKind.Array && property.Value.GetArrayLength() == 0
                    || property.Value.ValueKind == JsonValueKind.Object && !property.Value.EnumerateObject().Any(),
                    $"{type.Name}.{property.Name} is not set in the full sample ({property.Value.GetRawText()}).");
            }
        }
    }

    private static readonly Dictionary<string, ChildOutput> Samples = new()
    {
        ["every property set"] = Full(),
        ["nothing recorded"] = new ChildOutput(),
        ["nulls, empty lists and one sample"] = Sparse(),
        ["this machine"] = new ChildOutput { Machine = MachineInfo.Current() },
    };

    private static ChildOutput Full()
    {
        var placement = new Placement { ThreadCpus = [[1, 0], [3]], SharedCpu = true, SmtSiblings = true, Moved = true };
        var measurement = new Measurement
        {
            Variant = "Économique \"quoted\" <&> 線程 😀",
            Parameters = Parameters.Of(("size", 4096), ("records", 10_000_000_000L), ("share", 0.25), ("op", "scan ü"),
                ("pinned", true), ("idle", TimeSpan.FromSeconds(1.5)), ("negative", -3)),
            Threads = 4,
            Unit = Unit.BytesPerOp,
            LowerIsBetter = false,
            Statistics = Statistics.From([1.5, 2, 3, 4, 5, 6, 7, 8, 9, 1e300, 5e-324, 0.1]), // p10/p90 set, p99 NaN
            OperationsPerSample = 1_000_000,
            NsPerOp = 12.345678901234567,
            OpsPerSecond = 8.1e7,
            AllocatedBytesPerOp = 0.5,
            AllocatedBytes = long.MaxValue,
            Gc = new GcCounts { Gen0 = 3, Gen1 = 2, Gen2 = 1 },
            GcPauseMs = 0.75,
            LockContentions = 17,
            PeakWorkingSetBytes = 123_456_789,
            RatioToBaseline = 1.25,
            RatioLow = double.NegativeInfinity,
            RatioHigh = double.PositiveInfinity,
            Placement = placement,
            Launches = [new LaunchFigures(2, 30, double.NaN) { Placement = placement, AllocatedBytesPerOp = 64, Metrics = new Dictionary<string, double> { ["received"] = 9 }, RoundGroup = 7 }],
            RoundGroup = long.MaxValue - 1,
            SampleRounds = [0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5],
            Metrics = new Dictionary<string, double> { ["up"] = double.PositiveInfinity, ["down"] = double.NegativeInfinity, ["gap"] = double.NaN, ["zero"] = -0.0, ["ü"] = 1 },
        };
        return new ChildOutput
        {
            Measurements = [measurement, measurement with { Variant = "second", Parameters = Parameters.None }],
            Values = new Dictionary<string, double> { ["rate"] = 3.5, ["nan"] = double.NaN, ["max"] = double.MaxValue, ["min"] = double.MinValue },
            Texts = new Dictionary<string, string> { ["mode"] = "server, concurrent", ["ünïcode"] = "線程\t\"tab\"\n\\" },
            Notes = ["a note with ü and ' and +", ""],
            Tables = [new ResultTable("Table — 1", ["a", "b"], [["1", "2"], ["x", "線"]]), new ResultTable("empty", [], [])],
            Machine = new MachineInfo
            {
                Os = "Linux 6.1",
                Architecture = "X64",
                Runtime = ".NET 10.0.0",
                ProcessorCount = 2,
                AffinityProcessors = 2,
                AffinityMask = "0x3",
                GcMode = "server, concurrent",
                GcLatencyMode = "Interactive",
                TotalAvailableMemoryBytes = 8L << 30,
                SmtSiblings = "0-1",
                Ci = true,
                CallsCountedFromStart = true,
            },
        };
    }

    private static ChildOutput Sparse() => new()
    {
        Measurements =
        [
            new Measurement
            {
                Variant = "only",
                Unit = Unit.NsPerOp,
                Statistics = Statistics.From([42]),
                Placement = new Placement { ThreadCpus = [[0], [0]], SmtSiblings = null },
                Launches = [new LaunchFigures(0, 1, 42)],
            },
        ],
        Machine = new MachineInfo { Os = "", Architecture = "Arm64", Runtime = "r", GcMode = "workstation", GcLatencyMode = "Batch" },
    };
}
