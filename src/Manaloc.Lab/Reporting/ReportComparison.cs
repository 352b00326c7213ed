using Manaloc.Lab.Harness;
using Spectre.Console;

namespace Manaloc.Lab.Reporting;

/// <summary>One figure (an experiment's claim metric or one of its targets) in two reports.</summary>
/// <param name="Experiment">The experiment.</param>
/// <param name="Figure">The claim's metric or the target's name.</param>
/// <param name="Unit">The figure's unit.</param>
/// <param name="Before">The figure in the first report, with its interval.</param>
/// <param name="After">The figure in the second report, with its interval.</param>
public sealed record FigureChange(string Experiment, string Figure, Unit Unit, (double Value, double Low, double High) Before, (double Value, double Low, double High) After)
{
    /// <summary>After ÷ before.</summary>
    public double Ratio => After.Value / Before.Value;

    /// <summary>
    /// True when the two 95% intervals do not overlap (the change is larger than the noise of either run),
    /// false when they overlap, null when a figure has no interval (a count, bytes, a slowest sample).
    /// </summary>
    public bool? OutsideNoise => Before.Low == Before.High || After.Low == After.High ? null : After.Low > Before.High || After.High < Before.Low;
}

/// <summary>Sets two results.json files side by side: before/after a change, or one machine against another.</summary>
public static class ReportComparison
{
    /// <summary>Every figure measured in both reports, experiment by experiment in the first report's order.</summary>
    public static IReadOnlyList<FigureChange> Compare(LabReport before, LabReport after)
    {
        ArgumentNullException.ThrowIfNull(before);
        ArgumentNullException.ThrowIfNull(after);
        var changes = new List<FigureChange>();
        foreach (var a in before.Experiments)
        {
            var b = after.Experiments.FirstOrDefault(e => e.Experiment == a.Experiment);
            if (b is null) continue;
            if (Point(a.Verdict.TodayValue, a.Verdict.Low, a.Verdict.High) is { } va && Point(b.Verdict.TodayValue, b.Verdict.Low, b.Verdict.High) is { } vb
                && a.Verdict.TodayUnit is { } unit && unit == b.Verdict.TodayUnit)
            {
                changes.Add(new FigureChange(a.Experiment, "claim: " + (a.Verdict.Metric ?? "today's figure"), unit, va, vb));
            }
            foreach (var ta in a.Verdict.Targets)
            {
                var tb = b.Verdict.Targets.FirstOrDefault(t => t.Name == ta.Name);
                if (tb is null || ta.Unit != tb.Unit) continue;
                if (Point(ta.Today, ta.Low, ta.High) is { } pa && Point(tb.Today, tb.Low, tb.High) is { } pb)
                {
                    changes.Add(new FigureChange(a.Experiment, ta.Name, ta.Unit, pa, pb));
                }
            }
        }
        return changes;
    }

    /// <summary>Writes the comparison as one block per figure (it fits 80 columns whatever the names' length).</summary>
    public static void Write(IAnsiConsole console, LabReport before, LabReport after, IReadOnlyList<FigureChange> changes)
    {
        ArgumentNullException.ThrowIfNull(console);
        ArgumentNullException.ThrowIfNull(changes);
        console.MarkupLine($"A: {Markup.Escape(Describe(before))}");
        console.MarkupLine($"B: {Markup.Escape(Describe(after))}");
        console.WriteLine();
        foreach (var group in changes.GroupBy(c => c.Experiment))
        {
            console.Write(new Rule($"[bold]{Markup.Escape(group.Key)}[/]").LeftJustified());
            var table = new Table().Border(TableBorder.Simple).Expand()
                .AddColumn("figure")
                .AddColumn(new TableColumn("A").RightAligned().NoWrap())
                .AddColumn(new TableColumn("B").RightAligned().NoWrap())
                .AddColumn(new TableColumn("B/A").RightAligned().NoWrap())
                .AddColumn(new TableColumn("noise?").NoWrap());
            foreach (var c in group)
            {
                table.AddRow(Markup.Escape(c.Figure), Markup.Escape(c.Unit.Format(c.Before.Value)), Markup.Escape(c.Unit.Format(c.After.Value)),
                    Format.Ratio(c.Ratio), c.OutsideNoise switch { true => "[bold]changed[/]", false => "within", null => "no CI" });
            }
            console.Write(table);
        }
        int changed = changes.Count(c => c.OutsideNoise == true);
        console.MarkupLine($"{Format.Count(changes.Count, "figure")} in both reports; {changed} changed beyond both runs' 95% intervals (no CI: a figure without an interval, compare by eye).");
    }

    private static string Describe(LabReport r)
        => $"{r.StartedAt:yyyy-MM-dd HH:mm} UTC, {RunSettings.NameOf(r.Mode)}, {r.Machine.Os}, {r.Machine.Runtime}, {Format.Count(r.Machine.ProcessorCount, "processor")}";

    private static (double, double, double)? Point(double? value, double? low, double? high)
        => value is { } v && double.IsFinite(v) && v != 0 ? (v, low ?? v, high ?? v) : null;
}
