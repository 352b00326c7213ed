using Manaloc.Lab.Experiments;
using Manaloc.Lab.Harness;
using Manaloc.Lab.Tests.Harness;
using Manaloc.Memory;

namespace Manaloc.Lab.Tests.Experiments;

/// <summary>The live-set experiment's logic that is not timing: its child protocol, its representations, its weighing and its judge.</summary>
public sealed class LiveSetTests
{
    [Fact]
    public void A_plan_round_trips_through_the_child_arguments()
    {
        foreach (string variant in LiveSetSubject.All)
        {
            var plan = new LiveSetPlan(variant, 1_000_000, 10);
            Assert.Equal(plan, LiveSetPlan.Parse(plan.ToArguments()));
        }
    }

    [Theory]
    [InlineData(new[] { "class objects", "10" }, "3 arguments")]
    [InlineData(new[] { "no such thing", "10", "2" }, "no such thing")]
    [InlineData(new[] { "class objects", "-5", "2" }, "records")]
    [InlineData(new[] { "class objects", "10", "0" }, "churn rounds")]
    [InlineData(new[] { "class objects", "ten", "2" }, "'ten'")]
    public void A_bad_plan_is_refused_naming_the_problem(string[] arguments, string named)
    {
        var e = Assert.Throws<ArgumentException>(() => LiveSetPlan.Parse(arguments));
        Assert.Contains(named, e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_child_sends_back_the_four_measurements_under_the_GC_mode_it_ran()
    {
        var plan = new LiveSetPlan(LiveSetSubject.StructHandles, 5_000, 2);
        var output = ChildProcess.Run(["child", "live-set", "run", "--mode", "smoke", "--", .. plan.ToArguments()],
            new Dictionary<string, string?> { ["DOTNET_gcServer"] = "1" }, TimeSpan.FromMinutes(1));
        Assert.Equal(["churn", "churn-gc-pause", "full-gc", "heap"], output.Measurements.Select(m => m.Parameters["op"]).Order(StringComparer.Ordinal));
        Assert.All(output.Measurements, m =>
        {
            Assert.Equal(plan.Variant, m.Variant);
            Assert.Equal("server", m.Parameters["gc"]);
            Assert.Equal("5000", m.Parameters["records"]);
        });
        var churn = Assert.Single(output.Measurements, m => m.Parameters["op"] == "churn");
        Assert.Equal(1, churn.Statistics.Count); // one rate: every replacement over the whole phase
        Assert.Equal(1_000, churn.Metrics["replacements"]); // a tenth of the set per round, two rounds
        Assert.InRange(churn.Statistics.Median, churn.Metrics["slowestRoundPerSecond"], churn.Metrics["fastestRoundPerSecond"]);
    }

    [Fact]
    public void Bytes_per_record_split_into_container_and_records()
    {
        var bytes = new LiveSetBytes(Baseline: 1_000, AfterContainer: 17_000, AfterRecords: 21_000, Records: 1_000);
        Assert.Equal(20, bytes.PerRecord, 9);
        Assert.Equal(16, bytes.ContainerPerRecord, 9);
        Assert.Equal(4, bytes.RecordsPerRecord, 9);
        Assert.Equal(0, new LiveSetBytes(5_000, 4_000, 4_500, 10).PerRecord); // a heap that shrank by noise is not negative weight
    }

    [Theory]
    [MemberData(nameof(Variants))]
    public void Every_representation_creates_replaces_and_reads_back_its_records(string variant)
    {
        using var subject = LiveSetSubject.Create(variant);
        subject.Allocate(1_000);
        subject.Fill();
        Assert.Equal(0, subject.Read(0));
        Assert.Equal(999, subject.Read(999));
        subject.Replace(500, 123_456);
        Assert.Equal(123_456, subject.Read(500));
        Assert.Equal(501, subject.Read(501));
        Assert.Throws<InvalidOperationException>(() => subject.Allocate(10));
    }

    public static TheoryData<string> Variants() => new(LiveSetSubject.All);

    [Fact]
    public void An_unknown_representation_is_refused_by_name()
        => Assert.Contains("'nope'", Assert.Throws<ArgumentException>(() => LiveSetSubject.Create("nope")).Message, StringComparison.Ordinal);

    [Fact]
    public void The_pause_log_counts_each_GC_once_and_knows_what_it_missed()
    {
        var log = new GcPauseLog(startIndex: 10);
        log.Observe(9, 50, generation: 2);   // before the log started
        log.Observe(11, 1.5, generation: 0);
        log.Observe(11, 1.5, generation: 0); // seen again by the next poll
        log.Observe(13, 2.5, generation: 2); // 12 was overwritten before a poll
        Assert.Equal([1.5, 2.5], log.PausesMs.Order());
        Assert.Equal([1, 0, 1], log.ByGeneration);
        Assert.Equal(1, log.Unobserved(lastIndex: 13));
    }

    [Fact]
    public void The_struct_handle_uses_TypeLayouts_offsets_holds_16_bytes_and_refuses_use_after_delete()
    {
        var layout = TypeLayout.Of<TypedMemory.IFooData>();
        int Offset(string name) => layout.Fields.Single(f => f.Name == name).Offset;
        Assert.Equal((layout.Size, layout.Alignment), (LiveSetFooDataRef.Size, LiveSetFooDataRef.Alignment));
        Assert.Equal([Offset("Jar"), Offset("Car"), Offset("Bar"), Offset("Tar")],
            [LiveSetFooDataRef.JarOffset, LiveSetFooDataRef.CarOffset, LiveSetFooDataRef.BarOffset, LiveSetFooDataRef.TarOffset]);
        Assert.Equal(16, System.Runtime.CompilerServices.Unsafe.SizeOf<LiveSetFooDataRef>());

        var f = LiveSetFooDataRef.New();
        f.Jar = long.MaxValue;
        f.Tar = 7;
        Assert.Equal((long.MaxValue, (byte)7, 0), (f.Jar, f.Tar, f.Bar));
        var copy = f;
        f.Delete();
        Assert.False(copy.IsAllocated);
        Assert.Throws<InvalidOperationException>(() => copy.Bar);
        Assert.Throws<InvalidOperationException>(() => copy.Delete());
        Assert.Throws<InvalidOperationException>(() => default(LiveSetFooDataRef).Bar);
    }

    [Fact]
    public void The_judge_computes_each_target_from_the_medians_of_its_GC_mode()
    {
        var measurements = new List<Measurement>();
        void Add(string variant, string op, double median, string gc = "workstation")
            => measurements.Add(new Measurement
            {
                Variant = variant,
                Unit = op == "churn" ? "replacements/s" : op == "heap" ? "B/record" : "ms",
                Statistics = Statistics.From([median]),
                Parameters = new Dictionary<string, string> { ["gc"] = gc, ["op"] = op, ["records"] = "1000" },
            });
        // heap B/record, full-gc ms, churn replacements/s, churn-gc-pause ms
        foreach (var (variant, heap, pause, rate, p99) in new[]
        {
            (LiveSetSubject.Class, 48.0, 100.0, 1000.0, 50.0),
            (LiveSetSubject.Handles, 70.0, 150.0, 500.0, 80.0),
            (LiveSetSubject.UncheckedHandles, 40.0, 90.0, 600.0, 40.0),
            (LiveSetSubject.StructHandles, 20.0, 5.0, 1200.0, 4.0),
            (LiveSetSubject.Bulk, 0.001, 0.5, 5000.0, 0.1),
        })
        {
            Add(variant, "heap", heap);
            Add(variant, "full-gc", pause);
            Add(variant, "churn", rate);
            Add(variant, "churn-gc-pause", p99);
        }
        var verdict = new LiveSet().Judge(measurements);
        TargetResult Target(string start) => Assert.Single(verdict.Targets, t => t.Name.StartsWith("workstation: " + start, StringComparison.Ordinal));

        Assert.Equal(10, verdict.Targets.Count); // server GC measured nothing: no server targets
        Assert.Equal((0.05, true), (Target("full gen-2 pause, struct handles").Today!.Value, Target("full gen-2 pause, struct handles").Met!.Value));
        Assert.Equal((0.005, true), (Target("full gen-2 pause, RecordArray").Today!.Value, Target("full gen-2 pause, RecordArray").Met!.Value));
        Assert.False(Target("managed bytes per record, struct handles").Met); // 20 B > 16 B
        Assert.True(Target("managed bytes per record, RecordArray").Met);
        Assert.Equal(70.0 / 48, Target("managed bytes per record, TypeAllocator").Today!.Value, 9);
        Assert.False(Target("managed bytes per record, TypeAllocator").Met);
        Assert.True(Target("managed bytes per record, unchecked").Met);
        Assert.False(Target("full gen-2 pause, TypeAllocator").Met);
        Assert.True(Target("full gen-2 pause, unchecked").Met);
        Assert.Equal((0.08, true), (Target("churn p99").Today!.Value, Target("churn p99").Met!.Value));
        Assert.Equal((1.2, true), (Target("churn throughput").Today!.Value, Target("churn throughput").Met!.Value));
        // The checked handles weigh more than the class objects: the weakest path decides the verdict.
        Assert.Equal(Verdict.Reversed, verdict.Verdict);
        Assert.Contains("TypeAllocator handles (workstation)", verdict.Text, StringComparison.Ordinal);
        Assert.DoesNotContain("unchecked (workstation)", verdict.Text, StringComparison.Ordinal);
    }

    [Fact]
    public void A_class_churn_without_any_GC_leaves_the_pause_target_unmeasured_and_says_why()
    {
        Measurement M(string variant, string op, double median, double gcs = 1) => new()
        {
            Variant = variant,
            Unit = "ms",
            Statistics = Statistics.From([median]),
            Parameters = new Dictionary<string, string> { ["gc"] = "server", ["op"] = op, ["records"] = "1000" },
            Metrics = new Dictionary<string, double> { ["gcs"] = gcs },
        };
        var measurements = LiveSetSubject.All.SelectMany(v => new[] { M(v, "heap", 10), M(v, "full-gc", 10), M(v, "churn", 10) }).ToList();
        measurements.Add(M(LiveSetSubject.Class, "churn-gc-pause", 0, gcs: 0)); // recorded as one 0 ms pause with gcs = 0
        measurements.Add(M(LiveSetSubject.StructHandles, "churn-gc-pause", 0.3, gcs: 24));
        var verdict = new LiveSet().Judge(measurements);
        var p99 = Assert.Single(verdict.Targets, t => t.Name == "server: churn p99 GC pause, struct handles vs class objects");
        Assert.Null(p99.Met);
        Assert.Contains("no GC during the class set's churn", verdict.Text, StringComparison.Ordinal);
    }

    [Fact]
    public void Without_the_class_objects_there_is_nothing_to_judge()
        => Assert.Equal(Verdict.NotComparable, new LiveSet().Judge([]).Verdict);
}

/// <summary>Weighing a known set: reads the process's managed heap, so it runs alone.</summary>
[Collection(ProcessWideCollection.Name)]
public sealed class LiveSetWeighingTests
{
    [Theory]
    [InlineData(LiveSetSubject.Class, 8, 48)]              // an 8-byte reference per record + a 40-byte object (8 header, 8 method table, 21 B of fields padded to 24)
    [InlineData(LiveSetSubject.StructHandles, 16, 20)]     // the 16-byte handle + the slab's 4-byte generation stamp per slot (a pinned uint[] per chunk)
    [InlineData(LiveSetSubject.Bulk, 0, 0)]                // one view and one block header for the whole set
    public void A_known_set_weighs_what_its_layout_says(string variant, double container, double total)
    {
        const int records = 500_000; // large enough that the test process's own heap noise (tens of KB) stays under 0.2 B per record
        using (var warm = LiveSetSubject.Create(variant)) { warm.Allocate(100); warm.Fill(); }
        using var subject = LiveSetSubject.Create(variant);
        var bytes = LiveSetProbe.MeasureBytes(subject, records);
        Assert.InRange(bytes.ContainerPerRecord, container - 0.3, container + 0.3);
        Assert.InRange(bytes.PerRecord, total - 0.3, total + 0.3);
        Assert.Equal(records - 1, subject.Read(records - 1));
    }
}
