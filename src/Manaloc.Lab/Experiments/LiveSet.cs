using System.Globalization;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Experiments;

/// <summary>
/// Seed 000, "Writing a Manual Memory Manager in C#": does a large live set of records cost the collector less when
/// their data lives in native memory? Each representation (class objects, per-object TypeAllocator handles checked
/// and unchecked, 16-byte struct handles in an array, one RecordArray) runs in its own child process under
/// workstation and under server GC: managed bytes per record, the pause of a full blocking compacting gen-2
/// collection, and a churn phase that replaces a tenth of the set per round (throughput and per-GC pauses).
/// </summary>
public sealed class LiveSet : Experiment
{
    internal const string Workstation = "workstation";
    internal const string Server = "server";
    private static readonly (string Mode, string Value)[] GcModes = [(Workstation, "0"), (Server, "1")];

    /// <inheritdoc/>
    public override string Name => "live-set";
    /// <inheritdoc/>
    public override string Article => "Writing a Manual Memory Manager in C# (seed 000)";
    /// <inheritdoc/>
    public override string Description => "A large live set as class objects, TypeAllocator handles, struct handles and a RecordArray (child processes, workstation and server GC): managed bytes per record, full gen-2 pause, churn pauses.";
    /// <inheritdoc/>
    public override ArticleFigure Figure => new("Records in native memory keep their data off the GC heap, so a large live set costs the collector nothing");
    /// <inheritdoc/>
    public override IReadOnlyList<string> Variants => LiveSetSubject.All;
    /// <inheritdoc/>
    public override string Baseline => LiveSetSubject.Class;

    /// <inheritdoc/>
    public override IReadOnlyList<ParameterSpec> DescribeParameters(RunSettings settings) =>
    [
        new("gc", "GC mode of the child process (DOTNET_gcServer)", [Workstation, Server]),
        new("records", "live records", [LiveSetProbe.Records(settings).ToString(CultureInfo.InvariantCulture)]),
        new("op", "heap: managed bytes per record after a full collection, minus the heap before; full-gc: one blocking compacting gen-2 collection (wall clock); "
            + $"churn: replacements per second over the whole phase, a tenth of the set per round for {LiveSetProbe.ChurnRounds(settings)} rounds; churn-gc-pause: each GC's pause during the churn",
            ["heap", "full-gc", "churn", "churn-gc-pause"]),
    ];

    /// <inheritdoc/>
    public override void Run(ExperimentContext context)
    {
        var plan = new LiveSetPlan(LiveSetSubject.Class, LiveSetProbe.Records(context.Settings), LiveSetProbe.ChurnRounds(context.Settings));
        foreach (var (mode, value) in GcModes)
        {
            foreach (string variant in Variants)
            {
                // 10M per-object handles take minutes of a loaded 2-core machine in full mode; 1M, seconds.
                var child = context.RunChild("run", (plan with { Variant = variant }).ToArguments(),
                    new Dictionary<string, string?> { ["DOTNET_gcServer"] = value }, TimeSpan.FromMinutes(context.IsQuick ? 3 : 20));
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
        context.Note("Struct handles: a hand-written 16-byte handle (address + generation) into a NativeSlabAllocator block, standing in for the generated one.");
    }

    /// <inheritdoc/>
    public override void RunChild(string key, IReadOnlyList<string> arguments, ExperimentContext context)
    {
        if (key != "run") base.RunChild(key, arguments, context);
        LiveSetProbe.Run(context, LiveSetPlan.Parse(arguments));
    }

    /// <inheritdoc/>
    public override VerdictResult Judge(IReadOnlyList<Measurement> measurements)
    {
        var targets = new List<TargetResult>();
        var texts = new List<string>();
        var heavier = new List<string>();
        bool lightEnough = true;
        foreach (var (mode, _) in GcModes)
        {
            Measurement? Find(string variant, string op) => measurements.FirstOrDefault(m => m.Variant == variant
                && m.Parameters.GetValueOrDefault("gc") == mode && m.Parameters.GetValueOrDefault("op") == op);
            double Median(string variant, string op) => Find(variant, op)?.Statistics.Median ?? double.NaN;
            double P99(string variant) => Find(variant, "churn-gc-pause")?.Statistics.P99 ?? double.NaN;
            if (Find(LiveSetSubject.Class, "heap") is null) continue;
            string c = LiveSetSubject.Class, h = LiveSetSubject.Handles, u = LiveSetSubject.UncheckedHandles, s = LiveSetSubject.StructHandles, b = LiveSetSubject.Bulk;
            double Pause(string v) => Median(v, "full-gc") / Median(c, "full-gc");
            double Bytes(string v) => Median(v, "heap") / Median(c, "heap");
            targets.AddRange(
            [
                TargetResult.AtMost($"{mode}: full gen-2 pause, struct handles vs class objects", Pause(s), 0.10),
                TargetResult.AtMost($"{mode}: full gen-2 pause, RecordArray vs class objects", Pause(b), 0.01),
                TargetResult.AtMost($"{mode}: managed bytes per record, struct handles", Median(s, "heap"), 16, "B"),
                TargetResult.AtMost($"{mode}: managed bytes per record, RecordArray", Median(b, "heap"), 0.01, "B"),
                TargetResult.AtMost($"{mode}: managed bytes per record, TypeAllocator handles vs class objects", Bytes(h), 1),
                TargetResult.AtMost($"{mode}: managed bytes per record, unchecked TypeAllocator handles vs class objects", Bytes(u), 1),
                TargetResult.AtMost($"{mode}: full gen-2 pause, TypeAllocator handles vs class objects", Pause(h), 1),
                TargetResult.AtMost($"{mode}: full gen-2 pause, unchecked TypeAllocator handles vs class objects", Pause(u), 1),
                TargetResult.AtMost($"{mode}: churn p99 GC pause, struct handles vs class objects", P99(c) > 0 ? P99(s) / P99(c) : null, 0.10),
                TargetResult.AtLeast($"{mode}: churn throughput, struct handles vs class objects", Median(s, "churn") / Median(c, "churn"), 1),
            ]);
            string Describe(string v) => $"{v} {Format.Significant(Median(v, "heap"))} B/record, gen-2 {Format.Value(Median(v, "full-gc"), "ms")}";
            // With no collection during the class set's churn (server GC's gen0 budget can exceed the whole phase's allocation) there is no pause to compare.
            string classChurn = Find(c, "churn-gc-pause")?.Metrics.GetValueOrDefault("gcs") == 0 ? "no GC during the class set's churn" : $"class {Format.Value(P99(c), "ms")}";
            texts.Add($"{mode} GC: {string.Join("; ", LiveSetSubject.All.Select(Describe))}; churn p99 GC pause {classChurn}, struct handles {Format.Value(P99(s), "ms")}");
            foreach (string v in new[] { h, u, s, b })
            {
                if (!(Bytes(v) < 1 && Pause(v) < 1)) heavier.Add($"{v} ({mode})");
                if (!(Bytes(v) <= 0.10 && Pause(v) <= 0.10)) lightEnough = false;
            }
        }
        if (texts.Count == 0) return new(Verdict.NotComparable, "No child measured the class objects.") { Targets = targets };
        // The weakest path decides: a path that weighs on the collector as much as the class objects it replaces does not keep the claim.
        var verdict = heavier.Count > 0 ? Verdict.Reversed : lightEnough ? Verdict.Holds : Verdict.Shrinks;
        string lead = heavier.Count > 0
            ? $"Not for every path: {string.Join(", ", heavier)} weigh as much or more on the GC than the class objects (bytes or full gen-2 pause). "
            : "Every native path weighs less on the GC than the class objects. ";
        return new(verdict, lead + string.Join(". ", texts) + ".") { Targets = targets };
    }
}
