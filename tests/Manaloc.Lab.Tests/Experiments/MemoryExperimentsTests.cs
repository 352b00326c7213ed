using Manaloc.Lab.Experiments;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Experiments;

/// <summary>The Memory area's experiments produce the figures their verdicts and the targets rely on.</summary>
public sealed class MemoryExperimentsTests
{
    [Fact]
    public void TypedMemory_shows_both_layouts_and_a_bulk_scan_that_allocates_nothing()
    {
        var result = ExperimentRunner.Run(new TypedMemory(), RunSettings.Smoke());
        Assert.Null(result.Error);
        var layout = Assert.Single(result.Tables);
        Assert.Contains(layout.Rows, r => r[0] == "record" && r[3] == "21" && r[6] == "24");
        var bulkScan = Assert.Single(result.Measurements, m => m.Variant == "RecordArray (bulk)" && m.Parameters["op"] == "scan");
        Assert.True(bulkScan.AllocatedBytes < 1024, $"the bulk scan allocated {bulkScan.AllocatedBytes} bytes");
        foreach (var variant in new[] { "class instances", "AllocHGlobal per object", "TypeAllocator", "TypeAllocator unchecked" })
        {
            Assert.Contains(result.Measurements, m => m.Variant == variant && m.Parameters["op"] == "new+delete");
            Assert.Contains(result.Measurements, m => m.Variant == variant && m.Parameters["op"] == "get+set");
        }
        Assert.Contains(result.Verdict.Targets, t => t.Name.StartsWith("New+Delete", StringComparison.Ordinal));
        Assert.Contains("GC weight", result.Verdict.Text, StringComparison.Ordinal);
        // The checks' cost is a ratio of two pairs sampled at one shared count, never at counts calibrated apart.
        var pairs = result.Measurements.Where(m => m.Variant.StartsWith("struct handle", StringComparison.Ordinal) && m.Parameters["op"] == "new+delete").ToList();
        Assert.Equal(2, pairs.Count);
        Assert.Equal(pairs[0].OperationsPerSample, pairs[1].OperationsPerSample);
    }

    [Fact]
    public void TypedMemory_samples_every_time_a_target_divides_in_one_set_of_rounds_per_operation()
    {
        // Cells of a few nanoseconds measured one after the other let outside load or a clock change fall on one side of a
        // ratio only; sampled in the same rounds, both sides meet it alike and the bootstrap resamples the rounds together.
        (string Op, string[] Variants)[] ratios =
        [
            ("new+delete", ["AllocHGlobal per object", "TypeAllocator", "TypeAllocator unchecked", "TypeAllocator unchecked, recycled handles",
                "raw AllocHGlobal+FreeHGlobal", "struct handle (FooDataRef), held heap", "struct handle unchecked (FooDataUncheckedRef), held heap"]),
            ("get+set", ["class instances", "TypeAllocator", "sealed class, direct", "struct handle (FooDataRef), held heap",
                "struct handle unchecked (FooDataUncheckedRef), held heap"]),
        ];
        var result = ExperimentRunner.Run(new TypedMemory(), RunSettings.Smoke());
        Assert.Null(result.Error);
        var groups = new List<long>();
        foreach (var (op, variants) in ratios)
        {
            var cells = variants.Select(v => Assert.Single(result.Measurements, m => m.Variant == v && m.Parameters.Is("op", op))).ToList();
            Assert.All(cells, c => Assert.NotNull(c.RoundGroup));
            groups.Add(Assert.Single(cells.Select(c => c.RoundGroup!.Value).Distinct()));
            Assert.All(cells, c => Assert.Equal(cells[0].SampleRounds, c.SampleRounds));
            Assert.Equal(0, cells[0].SampleRounds.Count % variants.Length); // every cell takes every position in a round equally often
        }
        Assert.Equal(ratios.Length, groups.Distinct().Count());
    }

    [Fact]
    public void TypedMemory_figures_left_to_one_quick_launch_are_read_by_no_target_claim_or_headline()
    {
        // The cells a quick run measures in its last launch only (RunSettings.MeasuresUnjudged).
        (string Variant, string Op)[] unjudged =
        [
            ("class instances", "new+delete"), ("raw NativeMemory.Alloc+Free", "new+delete"),
            ("AllocHGlobal per object", "get+set"), ("TypeAllocator unchecked", "get+set"), ("RecordArray (bulk)", "get+set"),
            ("AllocHGlobal per object", "scan"), ("AllocHGlobal per object", "heap"), ("AllocHGlobal per object", "full-gc"),
            ("RecordArray unchecked", "scan"),
        ];
        var experiment = new TypedMemory();
        var result = ExperimentRunner.Run(experiment, RunSettings.Smoke());
        Assert.Null(result.Error);
        Assert.All(unjudged, c => Assert.Contains(result.Measurements, m => m.Variant == c.Variant && m.Parameters.Is("op", c.Op)));
        var everything = new Figures(result.Measurements, random: null);
        var judgedOnly = new Figures([.. result.Measurements.Where(m => !unjudged.Any(c => m.Variant == c.Variant && m.Parameters.Is("op", c.Op)))], random: null);
        Metric[] read =
        [
            experiment.Claim.Today, experiment.Headline.Figure, .. experiment.Headline.Beside,
            .. experiment.Targets.Select(t => t.Metric), .. experiment.Targets.Where(t => t.Floor is not null).Select(t => t.Floor!.Metric),
        ];
        Assert.All(read, metric => Assert.Equal(metric.Evaluate(everything), metric.Evaluate(judgedOnly)));
        Assert.True(read.Count(m => m.Evaluate(everything) is not null) > read.Length / 2, "most of what is read is measured in a smoke run");
    }

    [Fact]
    public void TypedMemory_judges_the_scan_target_at_the_largest_size_and_still_reports_the_smaller_one()
    {
        static Measurement Scan(string variant, int records, double ns, long allocated = 0) => new()
        {
            Variant = variant,
            Unit = "ns/op",
            Statistics = Statistics.From([ns, ns, ns]),
            AllocatedBytes = allocated,
            Parameters = Parameters.Of(("op", "scan"), ("records", records)),
        };
        var measurements = new[]
        {
            Scan("class instances", 1_000_000, 2.0),
            Scan("RecordArray (bulk)", 1_000_000, 4.0, allocated: 100),
            Scan("RecordArray unchecked", 1_000_000, 2.0),
            Scan("class instances", 10_000_000, 2.0),
            Scan("RecordArray (bulk)", 10_000_000, 1.0, allocated: 200),
        };
        var verdict = new TypedMemory().Judge(measurements);
        var scan = Assert.Single(verdict.Targets, t => t.Name.StartsWith("bulk scan", StringComparison.Ordinal));
        Assert.Contains("largest record count", scan.Name, StringComparison.Ordinal);
        Assert.Equal(2.0, scan.Today!.Value, 6); // at 10,000,000 records, not the 0.5x at 1,000,000
        var allocation = Assert.Single(verdict.Targets, t => t.Name.StartsWith("managed bytes", StringComparison.Ordinal));
        Assert.Equal(300, allocation.Today!.Value, 6); // every bulk scan's samples, both sizes
    }

    [Fact]
    public void FirstUse_never_generates_on_New_after_PreGenerate()
    {
        var result = ExperimentRunner.Run(new FirstUse(), RunSettings.Smoke());
        Assert.Null(result.Error);
        var after = Assert.Single(result.Measurements, m => m.Variant == "New after PreGenerate");
        Assert.Equal(0, after.Metrics["generatedOnNew"]);
        Assert.Contains(result.Measurements, m => m.Variant == "New, unseen type");
    }

    [Fact]
    public void HeapContention_measures_every_allocator_on_two_threads()
    {
        var result = ExperimentRunner.Run(new HeapContention(), RunSettings.Smoke());
        Assert.Null(result.Error);
        foreach (var variant in new HeapContention().Variants)
        {
            Assert.Contains(result.Measurements, m => m.Variant == variant && m.Threads == 2 && m.OpsPerSecond > 0);
        }
        Assert.NotEqual(Verdict.NotComparable, result.Verdict.Verdict);
        Assert.Single(result.Verdict.Targets);
    }

    [Fact]
    public void HeapContention_judges_the_allocators_net_of_the_loop_only_floor()
    {
        static Measurement Ns(string variant, double ns) => new()
        {
            Variant = variant, Unit = "ns/op", Threads = 2, Statistics = Statistics.From([ns, ns, ns]), NsPerOp = ns,
            Parameters = Parameters.Of(("threads", 2)),
        };
        var verdict = new HeapContention().Judge([Ns("NativeMemory.Alloc", 10), Ns("Marshal.AllocHGlobal", 10), Ns("NativeSlabAllocator", 4), Ns("loop only (no allocator)", 2)]);

        var target = Assert.Single(verdict.Targets);
        Assert.Equal(4, target.Today!.Value, 6); // (10 - 2) / (4 - 2)
        Assert.True(target.Met);
        Assert.Equal(2.5, verdict.TodayValue!.Value, 6); // the workload's ratio, floor included
        Assert.Contains("NativeSlabAllocator vs NativeMemory.Alloc", verdict.Text, StringComparison.Ordinal);

        // A floor at or above an allocator's time gives no ratio rather than a negative or infinite one.
        Assert.Null(HeapContention.NetRatio(10, 2, 2));
        Assert.Null(HeapContention.NetRatio(10, 4, null));
        var missing = new HeapContention().Judge([Ns("NativeMemory.Alloc", 10), Ns("NativeSlabAllocator", 4)]);
        Assert.Null(Assert.Single(missing.Targets).Today); // unmeasured, not met
    }

    [Fact]
    public void HeapContention_net_ratio_of_rounds_is_the_median_of_each_rounds_own_ratio_with_an_interval_around_it()
    {
        // Rounds 0-3: (10 - 2) / (4 - 2) = 4; round 4 hit by load on the slab's sample: (10 - 2) / (42 - 2) = 0.2.
        double[] malloc = [10, 10, 10, 10, 10], slab = [4, 4, 4, 4, 42], floor = [2, 2, 2, 2, 2];
        var net = HeapContention.NetRatioOfRounds(malloc, slab, floor);
        Assert.NotNull(net);
        Assert.Equal(4, net.Value.Median, 6);
        Assert.True(net.Value.Low <= net.Value.Median && net.Value.Median <= net.Value.High);
        Assert.Equal(0.2, net.Value.Low, 6); // resamples that draw the bad round three times or more
        Assert.Equal(4, net.Value.High, 6);
        // Rounds whose floor is not below both are left out; none left gives no ratio.
        Assert.Null(HeapContention.NetRatioOfRounds([2, 3], [2, 3], [2, 3]));
        Assert.Throws<ArgumentException>(() => HeapContention.NetRatioOfRounds([1], [1, 2], [1]));
        // The judge takes the rounds' figure from the slab's measurement when there is one.
        static Measurement Ns(string variant, double ns, Dictionary<string, double>? metrics = null) => new()
        {
            Variant = variant, Unit = "ns/op", Threads = 2, Statistics = Statistics.From([ns, ns, ns]), NsPerOp = ns,
            Parameters = Parameters.Of(("threads", 2)), Metrics = metrics ?? [],
        };
        var verdict = new HeapContention().Judge([Ns("NativeMemory.Alloc", 10), Ns("NativeSlabAllocator", 8, new() { ["netRatio"] = 3.5, ["netRatioLow95"] = 3, ["netRatioHigh95"] = 4 }), Ns("loop only (no allocator)", 2)]);
        Assert.Equal(3.5, Assert.Single(verdict.Targets).Today!.Value, 6);
    }
}
