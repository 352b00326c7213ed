using System.Text;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Reporting;

/// <summary>Writes report.md: the summary table, then per experiment its measurements, charts, notes and tables.</summary>
public static class MarkdownReport
{
    /// <summary>Renders the report; <paramref name="charts"/> maps an experiment to its chart files (relative paths).</summary>
    public static string Render(LabReport report, IReadOnlyDictionary<string, IReadOnlyList<RenderedChart>> charts)
    {
        var sb = new StringBuilder();
        sb.AppendLine("# Manaloc lab report").AppendLine();
        var m = report.Machine;
        sb.AppendLine($"Run {report.StartedAt:yyyy-MM-dd HH:mm} UTC, {report.Mode} mode, on {m.Os} ({m.Architecture}), {m.Runtime}, " +
                      $"{Format.Count(m.ProcessorCount, "processor")} (affinity: {m.AffinityProcessors?.ToString() ?? "n/a"}; SMT siblings: {m.SmtSiblings ?? "unknown"}), GC: {m.GcMode}.").AppendLine();
        if (RunBudget.Describe(report) is { } time) sb.AppendLine(time).AppendLine();
        sb.AppendLine("## Summary").AppendLine();
        sb.Append(SummaryTable(report));
        foreach (var result in report.Experiments)
        {
            sb.AppendLine().AppendLine($"## {result.Experiment}").AppendLine();
            sb.AppendLine($"*{result.Article}.* {result.Description}").AppendLine();
            if (result.Headline is { } headline) sb.AppendLine($"- For users: **{headline}**");
            if (result.ArticleFigure is { } figure) sb.AppendLine($"- Article: {figure.Text}");
            sb.AppendLine($"- The article's claim today: **{result.Verdict.Verdict}** — {result.Verdict.Text}");
            if (result.Error is not null) sb.AppendLine($"- Error: {result.Error}");
            if (result.Verdict.Targets.Count > 0)
            {
                sb.AppendLine($"- Targets: {TargetCount(result.Verdict)}").AppendLine();
                sb.AppendLine("| target | today (95% CI) | goal | |");
                sb.AppendLine("|---|---|---|---|");
                foreach (var t in result.Verdict.Targets) sb.AppendLine($"| {Cell(t.Name)} | {Cell(t.TodayText() + t.FloorFigureText())} | {Cell(t.GoalText() + t.FloorGoalText())} | {t.MetWord()} |");
                sb.AppendLine();
            }
            foreach (var p in result.Parameters) sb.AppendLine($"- Parameter `{p.Name}`: {p.Description} ({string.Join(", ", p.Values)})");
            sb.AppendLine($"- Baseline: {result.Baseline}; ran {result.RunAt:yyyy-MM-dd HH:mm} UTC in {RunSettings.NameOf(result.Mode)} mode, {Format.Count(result.Launches, "launch", "launches")}, took {result.ElapsedSeconds:0.0} s").AppendLine();
            if (result.Measurements.Count > 0) sb.Append(MeasurementTable(result));
            if (charts.TryGetValue(result.Experiment, out var list))
            {
                foreach (var chart in list) sb.AppendLine().AppendLine($"![{chart.Title}](charts/{chart.FileName})");
            }
            foreach (var table in result.Tables) sb.AppendLine().Append(Table(table));
            if (result.Notes.Count > 0)
            {
                sb.AppendLine();
                foreach (var note in result.Notes) sb.AppendLine($"- {note}");
            }
        }
        return sb.ToString();
    }

    /// <summary>The summary table: experiment, the headline for users, the article's figure, today's figure and the claim's verdict, targets.</summary>
    public static string SummaryTable(LabReport report)
    {
        var sb = new StringBuilder();
        sb.AppendLine("| experiment | for users (95% CI) | article | today (95% CI) | article's claim | targets |");
        sb.AppendLine("|---|---|---|---|---|---|");
        foreach (var r in report.Experiments)
        {
            sb.AppendLine($"| {Cell(r.Experiment)} | {Cell(r.Headline?.ToString() ?? "—")} | {Cell(r.ArticleFigure?.Text ?? "—")} | {Cell(Format.Today(r.Verdict))} | {Cell(VerdictWord(r.Verdict.Verdict))} | {Cell(TargetCount(r.Verdict))} |");
        }
        return sb.ToString();
    }

    /// <summary>"2 of 4 met (1 at the floor, 1 inconclusive)", or "—" when the experiment has no targets.</summary>
    public static string TargetCount(VerdictResult verdict)
    {
        if (verdict.Targets.Count == 0) return "—";
        int met = verdict.Targets.Count(t => t.Met == true);
        int atFloor = verdict.Targets.Count(t => t.AtFloor);
        int unmeasured = verdict.Targets.Count(t => t.Today is null);
        int undecided = verdict.Targets.Count(t => t.Met is null && t.Today is not null && !t.AtFloor);
        var others = new List<string>();
        if (atFloor > 0) others.Add($"{atFloor} at the floor");
        int unstable = verdict.Targets.Count(t => t.Unstable && !t.AtFloor);
        int once = verdict.Targets.Count(t => t.MeasuredOnce);
        undecided -= unstable + once;
        if (undecided > 0) others.Add($"{undecided} inconclusive");
        if (unstable > 0) others.Add($"{unstable} unstable");
        if (once > 0) others.Add($"{once} measured once");
        if (unmeasured > 0) others.Add($"{unmeasured} not measured");
        return $"{met} of {verdict.Targets.Count} met" + (others.Count > 0 ? $" ({string.Join(", ", others)})" : "");
    }

    /// <summary>The verdict as a word for tables.</summary>
    public static string VerdictWord(Verdict verdict) => verdict switch
    {
        Verdict.Holds => "holds",
        Verdict.Shrinks => "shrinks",
        Verdict.Reversed => "reversed",
        Verdict.Inconclusive => "inconclusive",
        Verdict.Unstable => "unstable",
        Verdict.Measured => "measured",
        _ => "not comparable",
    };

    private static string MeasurementTable(ExperimentResult result)
    {
        var sb = new StringBuilder();
        sb.AppendLine("| variant | parameters | median | min | max | ops/s | B/op | GC 0/1/2 | ratio |");
        sb.AppendLine("|---|---|---|---|---|---|---|---|---|");
        foreach (var m in result.Measurements)
        {
            sb.AppendLine(
                $"| {Cell(m.Variant)} | {Cell(m.ParameterKey)} | {Format.Value(m.Statistics.Median, m.Unit)} | {Format.Value(m.Statistics.Min, m.Unit)} | " +
                $"{Format.Value(m.Statistics.Max, m.Unit)} | {(m.OpsPerSecond is { } o ? Format.Value(o, "ops/s") : "")} | " +
                $"{(m.AllocatedBytesPerOp is { } b ? Format.Significant(b) : "")} | {m.Gc.Gen0}/{m.Gc.Gen1}/{m.Gc.Gen2} | " +
                $"{(m.RatioToBaseline is { } r ? Format.Ratio(r) : "")} |");
        }
        return sb.ToString();
    }

    private static string Table(ResultTable table)
    {
        var sb = new StringBuilder();
        sb.AppendLine($"**{table.Title}**").AppendLine();
        sb.AppendLine("| " + string.Join(" | ", table.Columns.Select(Cell)) + " |");
        sb.AppendLine("|" + string.Concat(table.Columns.Select(_ => "---|")));
        foreach (var row in table.Rows) sb.AppendLine("| " + string.Join(" | ", row.Select(Cell)) + " |");
        return sb.ToString();
    }

    private static string Cell(string text) => text.Replace("|", "\\|").Replace("\n", " ");
}
