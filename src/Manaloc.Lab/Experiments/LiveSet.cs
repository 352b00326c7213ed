using Manaloc.Lab.Subjects;

namespace Manaloc.Lab.Experiments;

/// <summary>
/// Seed 000, "Writing a Manual Memory Manager in C#": does a large live set of records cost the collector less when
/// their data lives in native memory? Each representation (class objects, per-object TypeAllocator handles checked
/// and unchecked, 16-byte struct handles in an array, one RecordArray) runs in its own child process under
/// workstation and under server GC: managed bytes per record, the pause of a full blocking compacting gen-2
/// collection, and a churn phase that replaces a tenth of the set per round (throughput and per-GC pauses).
/// </summary>
public sealed class LiveSet() : Experiment(
    "live-set", "Writing a Manual Memory Manager in C# (seed 000)",
    "A large live set as class objects, TypeAllocator handles, struct handles and a RecordArray (child processes, workstation and server GC): managed bytes per record, full gen-2 pause, churn pauses.",
    LiveSetSubject.All, LiveSetSubject.Class, quickSeconds: 34)
{
    internal const string Workstation = "workstation";
    internal const string Server = "server";
    private static readonly (string Mode, string Value)[] GcModes = [(Workstation, "0"), (Server, "1")];

    /// <inheritdoc/>
    public override Claim Claim => new("Records in native memory keep their data off the GC heap, so a large live set costs the collector nothing", null,
        // Judged on the weakest native path in either GC mode, not the best: the claim is about records in native memory,
        // and a path that weighs as much on the collector as the class objects it replaces (the per-object TypeAllocator
        // handles, each a managed object) breaks it even while the struct handles and the RecordArray keep it. Each path
        // is also a target below, so the best paths' figures stay in the report.
        new Metric("GC weight, class objects ÷ the weakest native path (smaller of the bytes-per-record and full gen-2 pause ratios, either GC mode)",
            Unit.Ratio, WeakestAdvantage));

    /// <summary>The smallest GC advantage of any native path over the class objects, over the GC modes the class objects were measured in.</summary>
    private static double? WeakestAdvantage(Figures f)
    {
        var modes = GcModes.Where(g => f.Find(LiveSetSubject.Class, In(g.Mode, "heap")) is not null).ToArray();
        if (modes.Length == 0) return null;
        // A path missing from a measured mode gives NaN, which the harness counts as not measured.
        return modes.SelectMany(g => NativePaths.Select(v => Advantage(f, g.Mode, v))).Min();
    }

    /// <summary>How many times lighter <paramref name="variant"/>'s live set is on the collector than the class set: the smaller of the bytes and pause ratios.</summary>
    private static double Advantage(Figures f, string mode, string variant)
        => Math.Min(f.Median(LiveSetSubject.Class, In(mode, "heap")) / Math.Max(f.Median(variant, In(mode, "heap")) ?? double.NaN, 1e-3) ?? double.NaN,
            f.Median(LiveSetSubject.Class, In(mode, "full-gc")) / f.Median(variant, In(mode, "full-gc")) ?? double.NaN);

    private static readonly string[] NativePaths = [LiveSetSubject.Handles, LiveSetSubject.UncheckedHandles, LiveSetSubject.StructHandles, LiveSetSubject.Bulk];

    private static Func<Measurement, bool> In(string mode, string op)
        => m => m.Parameters.Is("gc", mode) && m.Parameters.Is("op", op);

    /// <inheritdoc/>
    public override IReadOnlyList<Target> Targets => [.. GcModes.SelectMany(g => TargetsFor(g.Mode))];

    private static IEnumerable<Target> TargetsFor(string mode)
    {
        string c = LiveSetSubject.Class, h = LiveSetSubject.Handles, u = LiveSetSubject.UncheckedHandles, s = LiveSetSubject.StructHandles, b = LiveSetSubject.Bulk;
        double? Ratio(Figures f, string v, string op) => f.Median(v, In(mode, op)) / f.Median(c, In(mode, op));
        return
        [
            Target.AtMost($"{mode}: full gen-2 pause, struct handles vs class objects", Unit.Ratio, f => Ratio(f, s, "full-gc"), 0.10),
            Target.AtMost($"{mode}: full gen-2 pause, RecordArray vs class objects", Unit.Ratio, f => Ratio(f, b, "full-gc"), 0.01),
            Target.AtMost($"{mode}: managed bytes per record, struct handles", "B", f => f.Median(s, In(mode, "heap")), 16),
            Target.AtMost($"{mode}: managed bytes per record, RecordArray", "B", f => f.Median(b, In(mode, "heap")), 0.01),
            Target.AtMost($"{mode}: managed bytes per record, TypeAllocator handles vs class objects", Unit.Ratio, f => Ratio(f, h, "heap"), 1),
            Target.AtMost($"{mode}: managed bytes per record, unchecked TypeAllocator handles vs class objects", Unit.Ratio, f => Ratio(f, u, "heap"), 1),
            Target.AtMost($"{mode}: full gen-2 pause, TypeAllocator handles vs class objects", Unit.Ratio, f => Ratio(f, h, "full-gc"), 1),
            Target.AtMost($"{mode}: full gen-2 pause, unchecked TypeAllocator handles vs class objects", Unit.Ratio, f => Ratio(f, u, "full-gc"), 1),
            Target.AtMost($"{mode}: churn p99 GC pause, struct handles vs class objects", Unit.Ratio, f => ChurnP99(f, s, mode) / ChurnP99(f, c, mode), 0.10),
            Target.AtLeast($"{mode}: churn throughput, struct handles vs class objects", Unit.Ratio, f => f.TimesBetter(s, c, In(mode, "churn")), 1),
        ];
    }

    /// <summary>
    /// The p99 of the GC pauses during <paramref name="variant"/>'s churn; null below 100 pauses, and when no collection ran
    /// at all (recorded as one 0 ms pause with gcs = 0: server GC's gen0 budget can exceed the whole phase's allocation).
    /// </summary>
    private static double? ChurnP99(Figures f, string variant, string mode)
        => f.Find(variant, In(mode, "churn-gc-pause")) is { } m && m.Metrics.GetValueOrDefault("gcs") > 0 && f.Percentile(m, 0.99) is { } p && p > 0 ? p : null;
    /// <inheritdoc/>
    /// <remarks>Struct handles are the path to recommend; the weakest native path stands beside them (see the claim's remarks).</remarks>
    public override Headline Headline => new(
        new Metric("workstation GC: struct handles' full gen-2 pause with the live set, share of class objects' (lower is better)", Unit.Ratio,
            f => f.Median(LiveSetSubject.StructHandles, In(Workstation, "full-gc")) / f.Median(LiveSetSubject.Class, In(Workstation, "full-gc"))),
        new Metric("weakest native path (TypeAllocator handles, unchecked handles or RecordArray): the same share", Unit.Ratio,
            f => NativePaths.Select(v => f.Median(v, In(Workstation, "full-gc")) / f.Median(LiveSetSubject.Class, In(Workstation, "full-gc")) ?? double.NaN).Max()));

    /// <inheritdoc/>
    public override IReadOnlyList<ParameterSpec> DescribeParameters(RunSettings settings) =>
    [
        new("gc", "GC mode of the child process (DOTNET_gcServer)", [Workstation, Server]),
        new("records", "live records", [LiveSetProbe.Records(settings).ToString(CultureInfo.InvariantCulture)]),
        new("op", "heap: managed bytes per record after a full collection, minus the heap before; full-gc: one blocking compacting gen-2 collection (wall clock); "
            + $"churn: replacements per second over the whole phase, a tenth of the set per round for {Format.Count(LiveSetProbe.ChurnRounds(settings), "round")}"
            + (settings.Mode == RunMode.Quick ? $" ({LiveSetProbe.UnjudgedQuickRounds} rounds of a {LiveSetProbe.UnjudgedQuickRoundDivisor}th of the set, in the last launch only, for the paths whose churn no target reads: {string.Join(", ", LiveSetSubject.All.Where(v => !LiveSetProbe.HasJudgedChurn(v)))})" : "")
            + "; churn-gc-pause: each GC's pause during the churn",
            ["heap", "full-gc", "churn", "churn-gc-pause"]),
    ];

    /// <summary>The gen-0 budget of every child: small enough that the churn phase sees enough collections for a p99.</summary>
    internal const int Gen0BudgetBytes = 512 * 1024;
    private static readonly string Gen0BudgetHex = $"0x{Gen0BudgetBytes:x}";

    /// <inheritdoc/>
    public override void Run(ExperimentContext context)
    {
        var plan = new LiveSetPlan(LiveSetSubject.Class, LiveSetProbe.Records(context.Settings), LiveSetProbe.ChurnRounds(context.Settings));
        foreach (var (mode, value) in GcModes)
        {
            foreach (string variant in Variants)
            {
                // 10M per-object handles take minutes of a loaded 2-core machine in full mode; 1M, seconds.
                var child = context.RunChild("run", (plan with { Variant = variant, ChurnRounds = LiveSetProbe.ChurnRounds(context.Settings, variant) }).ToArguments(),
                    new Dictionary<string, string?> { ["DOTNET_gcServer"] = value, ["DOTNET_GCgen0size"] = Gen0BudgetHex }, TimeSpan.FromMinutes(context.Settings.Pick(smoke: 3, quick: 3, full: 20)));
                foreach (var m in child.Measurements) context.Record(m);
                if (child.Machine is { } machine && !machine.GcMode.Contains(mode, StringComparison.OrdinalIgnoreCase))
                {
                    context.Note($"{variant}: the child asked for {mode} GC reported '{machine.GcMode}'.");
                }
            }
        }
        context.Note($"Churn: each replacement also allocates {LiveSetProbe.GarbageBytes + 24} B of short-lived garbage in every variant, so every variant sees collections; "
            + "a TypeAllocator or struct handle is replaced by Delete then New, a class object by a new object, a RecordArray record is rewritten in place.");
        context.Note("Churn pauses: per GC, from GC.GetGCMemoryInfo (GCKind.Any and Background) read whenever the collection count moved (every 256 replacements); "
            + "a background GC's pause is the sum of its two pauses. metrics.totalPauseDurationMs is GC.GetTotalPauseDuration's delta over the phase, for comparison.");
        foreach (string note in Observations(context.Measurements)) context.Note(note);
        context.Note("Struct handles: the generated FooDataRef (16 bytes: address and generation; checked), made and deleted through a held TypeAllocator.ThreadHeap.");
        context.Note($"Every child runs with DOTNET_GCgen0size={Gen0BudgetHex} ({Gen0BudgetBytes / 1024} KiB), the same for every variant and GC mode, so that a quick churn phase "
            + "sees many collections (with the default budget it saw 1 to 24). The GC still grows the budget where many objects survive, so a variant that has seen "
            + $"fewer than its launch's share of the {Statistics.MinForP99} a p99 needs ({LiveSetProbe.PausesWanted(context.Settings)}) after its rounds goes on with more rounds of the same work "
            + $"(only {LiveSetSubject.Class} and {LiveSetSubject.StructHandles}, whose p99 a target reads; the other paths' p99 may then be n/a), "
            + $"for at most {LiveSetProbe.ChurnExtension(context.Settings).TotalSeconds:0.#} s and only while its pace can get there in that time; "
            + "throughput is over every round.");
    }

    /// <inheritdoc/>
    public override void RunChild(string key, IReadOnlyList<string> arguments, ExperimentContext context)
    {
        if (key != "run") base.RunChild(key, arguments, context);
        LiveSetProbe.Run(context, LiveSetPlan.Parse(arguments));
    }

    /// <summary>Per GC mode: each representation's bytes per record and full gen-2 pause, the churn's p99 GC pause, and the paths no lighter than the class objects.</summary>
    internal static IEnumerable<string> Observations(IReadOnlyList<Measurement> measurements)
    {
        var f = new Figures(measurements, random: null);
        foreach (var (mode, _) in GcModes)
        {
            if (f.Find(LiveSetSubject.Class, In(mode, "heap")) is null) continue;
            string Describe(string v) => $"{v} {Format.Significant(f.Median(v, In(mode, "heap")) ?? double.NaN)} B/record, gen-2 {Format.Value(f.Median(v, In(mode, "full-gc")) ?? double.NaN, "ms")}";
            string P99(string v) => ChurnP99(f, v, mode) is { } p ? Format.Value(p, "ms")
                : $"n/a ({f.Find(v, In(mode, "churn-gc-pause"))?.Metrics.GetValueOrDefault("gcs") ?? 0} GCs; a p99 needs {Statistics.MinForP99})";
            string classChurn = f.Find(LiveSetSubject.Class, In(mode, "churn-gc-pause"))?.Metrics.GetValueOrDefault("gcs") == 0
                ? "no GC during the class set's churn" : $"class {P99(LiveSetSubject.Class)}";
            yield return $"{mode} GC: {string.Join("; ", LiveSetSubject.All.Select(Describe))}; churn p99 GC pause {classChurn}, struct handles {P99(LiveSetSubject.StructHandles)}.";
            var heavier = NativePaths.Where(v => !(Advantage(f, mode, v) > 1)).ToArray();
            if (heavier.Length > 0) yield return $"{mode} GC: as heavy or heavier on the GC than the class objects (bytes per record or full gen-2 pause): {string.Join("; ", heavier)}.";
        }
    }
}
