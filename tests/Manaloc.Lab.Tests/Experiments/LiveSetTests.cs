using Manaloc.Lab.Experiments;
using Manaloc.Lab.Harness;
using Manaloc.Lab.Subjects;
using Manaloc.Lab.Tests.Harness;
using Manaloc.Memory;

namespace Manaloc.Lab.Tests.Experiments;

/// <summary>The live-set experiment's logic that is not timing: its child protocol, its representations, its weighing and its declared claim and targets.</summary>
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

    [Fact]
    public void A_quick_run_shortens_only_the_churn_no_target_reads()
    {
        var quick = RunSettings.Quick();
        var context = new ExperimentContext("live-set", quick);
        foreach (string gc in new[] { LiveSet.Workstation, LiveSet.Server })
        {
            foreach (string variant in LiveSetSubject.All.Where(LiveSetProbe.HasJudgedChurn))
            {
                var p = Parameters.Of(("gc", gc), ("records", 1000));
                var gcs = new Dictionary<string, double> { ["gcs"] = 120 };
                context.RecordSamples(variant, "replacements/s", [1e6], p.With("op", "churn"), lowerIsBetter: false, metrics: gcs);
                context.RecordSamples(variant, "ms", [.. Enumerable.Range(1, 120).Select(i => i / 10.0)], p.With("op", "churn-gc-pause"), metrics: gcs);
            }
        }
        var figures = new Figures(context.Measurements, random: null);
        var churnTargets = new LiveSet().Targets.Where(t => t.Metric.Name.Contains("churn", StringComparison.Ordinal)).ToArray();
        Assert.NotEmpty(churnTargets);
        // Every churn target is computed from the judged paths' churn alone.
        Assert.All(churnTargets, t => Assert.NotNull(t.Metric.Evaluate(figures)));
        var lastQuickLaunch = quick with { Launch = quick.Launches - 1 };
        foreach (string variant in LiveSetSubject.All)
        {
            // The churn no target reads runs in the last quick launch only; the judged churn in every launch.
            Assert.Equal(LiveSetProbe.HasJudgedChurn(variant) ? 10 : LiveSetProbe.UnjudgedQuickRounds, LiveSetProbe.ChurnRounds(lastQuickLaunch, variant));
            Assert.Equal(LiveSetProbe.HasJudgedChurn(variant) ? 10 : 0, LiveSetProbe.ChurnRounds(quick, variant));
            Assert.Equal(LiveSetProbe.HasJudgedChurn(variant) ? 10 : 0, LiveSetProbe.ChurnRounds(quick with { Launch = 1 }, variant));
            Assert.Equal(10, LiveSetProbe.ChurnRounds(RunSettings.Full() with { Launches = 5, Launch = 0 }, variant));
            Assert.Equal(10, LiveSetProbe.ChurnRounds(RunSettings.Full(), variant));
            Assert.Equal(LiveSetProbe.HasJudgedChurn(variant) ? 10 : 20, LiveSetProbe.RoundDivisor(quick, variant));
            Assert.Equal(10, LiveSetProbe.RoundDivisor(RunSettings.Full(), variant));
        }
    }

    [Fact]
    public void Churn_runs_its_rounds_and_goes_on_only_while_a_p99_lacks_collections_and_time_is_left()
    {
        using var subject = LiveSetSubject.Create(LiveSetSubject.Class);
        subject.Allocate(1000);
        subject.Fill();
        var exact = LiveSetProbe.Churn(subject, rounds: 3, CancellationToken.None, TimeSpan.Zero);
        Assert.Equal(3, exact.RatesPerSecond.Length);
        Assert.Equal(300, exact.Replacements);
        var smaller = LiveSetProbe.Churn(subject, rounds: 2, CancellationToken.None, TimeSpan.Zero, roundDivisor: 20);
        Assert.Equal(2, smaller.RatesPerSecond.Length);
        Assert.Equal(100, smaller.Replacements); // a twentieth of 1000 per round
        Assert.Throws<ArgumentOutOfRangeException>(() => LiveSetProbe.Churn(subject, rounds: 1, CancellationToken.None, TimeSpan.Zero, roundDivisor: 0));

        var limit = TimeSpan.FromMilliseconds(300);
        var extended = LiveSetProbe.Churn(subject, rounds: 3, CancellationToken.None, limit);
        Assert.Equal(100L * extended.RatesPerSecond.Length, extended.Replacements); // throughput is over every round
        Assert.True(extended.Seconds < limit.TotalSeconds + 1); // no further than a round past the limit
    }

    [Theory]
    [InlineData(2, 10, 0, 34, 0.5, 0.0, 4.0, true)]     // within its rounds: always
    [InlineData(10, 10, 40, 34, 1.0, 0.0, 4.0, false)]  // enough pauses for its launch's share
    [InlineData(10, 10, 10, 34, 1.0, 0.0, 4.0, true)]   // 10 pauses a second: 34 within the 4 s left
    [InlineData(10, 10, 3, 34, 1.0, 0.0, 4.0, false)]   // 3 a second: 15 by the limit, short of 34: stop now
    [InlineData(12, 10, 0, 34, 1.2, 0.2, 4.0, false)]   // no collection at all: the pace reaches nothing
    [InlineData(30, 10, 20, 34, 5.0, 4.0, 4.0, false)]  // the time is spent
    public void Churn_extends_only_while_its_pace_can_reach_the_pauses_it_wants(int round, int rounds, int pauses, int wanted, double seconds, double extended, double limit, bool expected)
        => Assert.Equal(expected, LiveSetProbe.TakesAnotherRound(round, rounds, pauses, wanted, seconds, extended, limit));

    [Fact]
    public void Each_launch_wants_its_share_of_the_pauses_a_p99_needs()
    {
        Assert.Equal(34, LiveSetProbe.PausesWanted(RunSettings.Quick()));        // 3 launches: 3 × 34 ≥ 100
        Assert.Equal(20, LiveSetProbe.PausesWanted(RunSettings.Full()));         // 5 launches
        Assert.Equal(Statistics.MinForP99, LiveSetProbe.PausesWanted(RunSettings.Smoke())); // one launch: all of them
    }

    [Theory]
    [InlineData(new[] { "class objects", "10" }, "3 arguments")]
    [InlineData(new[] { "no such thing", "10", "2" }, "no such thing")]
    [InlineData(new[] { "class objects", "-5", "2" }, "records")]
    [InlineData(new[] { "class objects", "10", "-1" }, "churn rounds")]
    [InlineData(new[] { "class objects", "0", "2" }, "records")]
    [InlineData(new[] { "class objects", "ten", "2" }, "'ten'")]
    public void A_bad_plan_is_refused_naming_the_problem(string[] arguments, string named)
    {
        var e = Assert.Throws<ArgumentException>(() => LiveSetPlan.Parse(arguments));
        Assert.Contains(named, e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_plan_without_churn_rounds_weighs_and_collects_but_does_not_churn()
    {
        var plan = new LiveSetPlan(LiveSetSubject.UncheckedHandles, 2_000, 0);
        Assert.Equal(plan, LiveSetPlan.Parse(plan.ToArguments()));
        var context = new ExperimentContext("live-set", RunSettings.Smoke());
        LiveSetProbe.Run(context, plan);
        Assert.Equal(["full-gc", "heap"], context.Measurements.Select(m => m.Parameters.Text("op")).Order(StringComparer.Ordinal));
        Assert.All(context.Measurements, m => Assert.Equal(plan.Variant, m.Variant));
    }

    [Fact]
    public void A_child_sends_back_the_four_measurements_under_the_GC_mode_it_ran()
    {
        var plan = new LiveSetPlan(LiveSetSubject.StructHandles, 5_000, 2);
        var output = ChildProcess.Run(["child", "live-set", "run", "--mode", "smoke", "--", .. plan.ToArguments()],
            new Dictionary<string, string?> { ["DOTNET_gcServer"] = "1" }, TimeSpan.FromMinutes(1));
        Assert.Equal(["churn", "churn-gc-pause", "full-gc", "heap"], output.Measurements.Select(m => m.Parameters.Text("op")).Order(StringComparer.Ordinal));
        Assert.All(output.Measurements, m =>
        {
            Assert.Equal(plan.Variant, m.Variant);
            Assert.Equal("server", m.Parameters.Text("gc"));
            Assert.Equal(5000, m.Parameters.Int("records")); // typed after the trip through the child's JSON
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
    public void The_live_sets_struct_handle_is_the_generated_16_byte_one_and_refuses_use_after_delete()
    {
        Assert.Equal(16, System.Runtime.CompilerServices.Unsafe.SizeOf<Manaloc.Lab.Subjects.FooDataRef>());
        Assert.False(System.Runtime.CompilerServices.RuntimeHelpers.IsReferenceOrContainsReferences<Manaloc.Lab.Subjects.FooDataRef>());
        Assert.Equal(TypeLayout.Of<Manaloc.Lab.Subjects.IFooData>().Size, Manaloc.Lab.Subjects.FooDataRef.RecordType.Layout.Size);

        using var subject = LiveSetSubject.Create(LiveSetSubject.StructHandles);
        subject.Allocate(1000);
        subject.Fill();
        Assert.Equal(999, subject.Read(999));
        subject.Replace(5, 77);
        Assert.Equal(77, subject.Read(5));

        using var allocator = new TypeAllocator();
        var f = Manaloc.Lab.Subjects.FooDataRef.New(allocator);
        f.Jar = long.MaxValue;
        f.Tar = 7;
        Assert.Equal((long.MaxValue, (byte)7, 0), (f.Jar, f.Tar, f.Bar));
        var copy = f;
        f.Delete(allocator);
        Assert.False(copy.IsAllocated);
        Assert.Throws<InvalidOperationException>(() => copy.Bar);
        Assert.Throws<InvalidOperationException>(() => copy.Delete(allocator));
    }

    private static Measurement M(string variant, string op, IReadOnlyList<double> samples, string gc = "workstation", double gcs = 1) => new()
    {
        Variant = variant,
        Unit = op == "churn" ? "replacements/s" : op == "heap" ? "B/record" : "ms",
        LowerIsBetter = op != "churn",
        Statistics = Statistics.From(samples.ToArray()),
        Parameters = Parameters.Of(("gc", gc), ("op", op), ("records", 1000)),
        Metrics = new Dictionary<string, double> { ["gcs"] = gcs },
    };

    /// <summary>One mode's four measurements per representation: heap B/record, full-gc ms, churn replacements/s, and 100 churn GC pauses at <c>p99</c> ms.</summary>
    private static List<Measurement> Workstation(double handlesHeap = 70, double handlesPause = 150)
    {
        var measurements = new List<Measurement>();
        foreach (var (variant, heap, pause, rate, p99) in new[]
        {
            (LiveSetSubject.Class, 48.0, 100.0, 1000.0, 50.0),
            (LiveSetSubject.Handles, handlesHeap, handlesPause, 500.0, 80.0),
            (LiveSetSubject.UncheckedHandles, 40.0, 90.0, 600.0, 40.0),
            (LiveSetSubject.StructHandles, 20.0, 5.0, 1200.0, 4.0),
            (LiveSetSubject.Bulk, 0.001, 0.5, 5000.0, 0.1),
        })
        {
            measurements.Add(M(variant, "heap", [heap, heap, heap]));
            measurements.Add(M(variant, "full-gc", [pause, pause, pause]));
            measurements.Add(M(variant, "churn", [rate, rate, rate]));
            measurements.Add(M(variant, "churn-gc-pause", Enumerable.Repeat(p99, 100).ToArray(), gcs: 100));
        }
        return measurements;
    }

    [Fact]
    public void Each_declared_target_reads_the_medians_of_its_GC_mode()
    {
        var verdict = new LiveSet().Judge(Workstation());
        TargetResult Target(string name) => Assert.Single(verdict.Targets, t => t.Name.StartsWith(name, StringComparison.Ordinal));
        TargetResult Ws(string start) => Target("workstation: " + start);

        Assert.Equal(20, verdict.Targets.Count); // ten per GC mode
        Assert.All(verdict.Targets.Where(t => t.Name.StartsWith("server:", StringComparison.Ordinal)), t => Assert.Equal("not measured", t.MetWord()));
        Assert.Equal((0.05, true), (Ws("full gen-2 pause, struct handles").Today!.Value, Ws("full gen-2 pause, struct handles").Met!.Value));
        Assert.Equal((0.005, true), (Ws("full gen-2 pause, RecordArray").Today!.Value, Ws("full gen-2 pause, RecordArray").Met!.Value));
        Assert.False(Ws("managed bytes per record, struct handles").Met); // 20 B > 16 B
        Assert.True(Ws("managed bytes per record, RecordArray").Met);
        Assert.Equal(70.0 / 48, Ws("managed bytes per record, TypeAllocator").Today!.Value, 9);
        Assert.False(Ws("managed bytes per record, TypeAllocator").Met);
        Assert.True(Ws("managed bytes per record, unchecked").Met);
        Assert.False(Ws("full gen-2 pause, TypeAllocator").Met);
        Assert.True(Ws("full gen-2 pause, unchecked").Met);
        Assert.Equal((0.08, true), (Ws("churn p99").Today!.Value, Ws("churn p99").Met!.Value)); // 4 ms / 50 ms
        Assert.Equal((1.2, true), (Ws("churn throughput").Today!.Value, Ws("churn throughput").Met!.Value));
    }

    [Fact]
    public void The_weakest_native_path_decides_the_claim()
    {
        // The checked handles weigh more than the class objects: 48 / 70 B per record, 100 / 150 ms.
        var heavier = new LiveSet().Judge(Workstation());
        Assert.Equal(Verdict.Reversed, heavier.Verdict);
        Assert.Equal(100.0 / 150, heavier.TodayValue!.Value, 9); // the smaller of its bytes (48 / 70) and pause (100 / 150) ratios
        Assert.Contains($"than the class objects (bytes per record or full gen-2 pause): {LiveSetSubject.Handles}.", string.Join(" ", LiveSet.Observations(Workstation())), StringComparison.Ordinal);

        // Every path lighter: the weakest is then the unchecked handles' 100 / 90 ms full gen-2 pause, short of the 1.1x an effect needs.
        var lighter = new LiveSet().Judge(Workstation(handlesHeap: 20, handlesPause: 50));
        Assert.Equal(100.0 / 90, lighter.TodayValue!.Value, 9);
        Assert.Equal(Verdict.Holds, lighter.Verdict);
    }

    [Fact]
    public void A_path_missing_from_a_measured_mode_leaves_the_claim_not_comparable()
    {
        var measurements = Workstation().Where(m => m.Variant != LiveSetSubject.Bulk).ToList();
        Assert.Equal(Verdict.NotComparable, new LiveSet().Judge(measurements).Verdict);
    }

    [Fact]
    public void A_class_churn_without_any_GC_leaves_the_pause_target_unmeasured_and_says_why()
    {
        var measurements = LiveSetSubject.All.SelectMany(v => new[] { M(v, "heap", [10], "server"), M(v, "full-gc", [10], "server"), M(v, "churn", [10], "server") }).ToList();
        measurements.Add(M(LiveSetSubject.Class, "churn-gc-pause", [0], "server", gcs: 0)); // recorded as one 0 ms pause with gcs = 0
        measurements.Add(M(LiveSetSubject.StructHandles, "churn-gc-pause", Enumerable.Repeat(0.3, 120).ToArray(), "server", gcs: 120));
        var p99 = Assert.Single(new LiveSet().Judge(measurements).Targets, t => t.Name == "server: churn p99 GC pause, struct handles vs class objects");
        Assert.Equal("not measured", p99.MetWord());
        Assert.Contains("no GC during the class set's churn", string.Join(" ", LiveSet.Observations(measurements)), StringComparison.Ordinal);
    }

    [Fact]
    public void Fewer_than_100_churn_pauses_give_no_p99_rather_than_the_maximum()
    {
        var measurements = Workstation();
        int i = measurements.FindIndex(m => m.Variant == LiveSetSubject.StructHandles && m.Parameters["op"] == "churn-gc-pause");
        measurements[i] = M(LiveSetSubject.StructHandles, "churn-gc-pause", Enumerable.Repeat(4.0, 99).ToArray(), gcs: 99);
        Assert.Null(Assert.Single(new LiveSet().Judge(measurements).Targets, t => t.Name == "workstation: churn p99 GC pause, struct handles vs class objects").Today);
    }

    [Fact]
    public void Without_the_class_objects_there_is_nothing_to_judge()
    {
        var verdict = new LiveSet().Judge([]);
        Assert.Equal(Verdict.NotComparable, verdict.Verdict);
        Assert.All(verdict.Targets, t => Assert.Null(t.Met));
    }
}

/// <summary>Weighing a known set: reads the process's managed heap, so it runs alone.</summary>
[Collection(ProcessWideCollection.Name)]
public sealed class LiveSetWeighingTests
{
    [Theory]
    [InlineData(LiveSetSubject.Class, 8, 48)]              // an 8-byte reference per record + a 40-byte object (8 header, 8 method table, 21 B of fields padded to 24)
    [InlineData(LiveSetSubject.StructHandles, 16, 16)]     // the 16-byte handle; its generation stamp sits in the native block's trailer
    [InlineData(LiveSetSubject.Bulk, 0, 0)]                // one view and one block header for the whole set
    public void A_known_set_weighs_what_its_layout_says(string variant, double container, double total)
    {
        const int records = 500_000; // large enough that the test process's own heap noise (tens of KB) stays under 0.2 B per record
        using (var warm = LiveSetSubject.Create(variant)) { warm.Allocate(100); warm.Fill(); }
        using var subject = LiveSetSubject.Create(variant);
        var bytes = LiveSetBytes.Measure(subject, records);
        Assert.InRange(bytes.ContainerPerRecord, container - 0.3, container + 0.3);
        Assert.InRange(bytes.PerRecord, total - 0.3, total + 0.3);
        Assert.Equal(records - 1, subject.Read(records - 1));
    }
}
