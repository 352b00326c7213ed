using Manaloc.Lab.Harness;
using Spectre.Console;

namespace Manaloc.Lab.Reporting;

/// <summary>Terminal output: a table per experiment, the summary, and the experiment list.</summary>
public static class TerminalReport
{
    /// <summary>Writes a table per experiment and the summary to <paramref name="console"/>.</summary>
    public static void Write(IAnsiConsole console, LabReport report)
    {
        foreach (var result in report.Experiments)
        {
            var table = new Table().Border(TableBorder.Rounded)
                .Title($"[bold]{Markup.Escape(result.Experiment)}[/] — {Markup.Escape(result.Article)}")
                .AddColumns("variant", "parameters", "median", "min", "max", "ops/s", "B/op", "GC 0/1/2", "ratio");
            foreach (var m in result.Measurements)
            {
                table.AddRow(
                    Markup.Escape(m.Variant), Markup.Escape(m.ParameterKey),
                    Markup.Escape(Format.Value(m.Statistics.Median, m.Unit)),
                    Markup.Escape(Format.Value(m.Statistics.Min, m.Unit)),
                    Markup.Escape(Format.Value(m.Statistics.Max, m.Unit)),
                    m.OpsPerSecond is { } o ? Markup.Escape(Format.Value(o, "ops/s")) : "",
                    m.AllocatedBytesPerOp is { } b ? Format.Significant(b) : "",
                    $"{m.Gc.Gen0}/{m.Gc.Gen1}/{m.Gc.Gen2}",
                    m.RatioToBaseline is { } r ? Format.Ratio(r) : "");
            }
            if (result.Measurements.Count > 0) console.Write(table);
            foreach (var extra in result.Tables)
            {
                var t = new Table().Border(TableBorder.Simple).Title(Markup.Escape(extra.Title));
                foreach (var c in extra.Columns) t.AddColumn(Markup.Escape(c));
                foreach (var row in extra.Rows) t.AddRow(row.Select(Markup.Escape).ToArray());
                console.Write(t);
            }
            if (result.ArticleFigure is { } figure) console.MarkupLine($"  article: {Markup.Escape(figure.Text)}");
            console.MarkupLine($"  verdict: [bold]{MarkdownReport.VerdictWord(result.Verdict.Verdict)}[/] — {Markup.Escape(result.Verdict.Text)}");
            foreach (var t in result.Verdict.Targets)
            {
                string color = t.Met switch { true => "green", false => "red", null => "yellow" };
                console.MarkupLine($"  target: {Markup.Escape(t.Name)} {Markup.Escape(t.TodayText())}{(t.Best is null ? "" : Markup.Escape($" (best samples {t.BestText()})"))}, goal {Markup.Escape(t.GoalText())}: [{color}]{Markup.Escape(t.MetWord())}[/]");
            }
            foreach (var note in result.Notes) console.MarkupLine($"  note: {Markup.Escape(note)}");
            if (result.Error is not null) console.MarkupLine($"  [red]error:[/] {Markup.Escape(result.Error)}");
            console.WriteLine();
        }
        var summary = new Table().Border(TableBorder.Rounded).Title("[bold]summary[/]").AddColumns("experiment", "article", "today", "verdict", "targets");
        foreach (var r in report.Experiments)
        {
            summary.AddRow(Markup.Escape(r.Experiment), Markup.Escape(r.ArticleFigure?.Text ?? "—"), Markup.Escape(r.Verdict.Text), MarkdownReport.VerdictWord(r.Verdict.Verdict), Markup.Escape(MarkdownReport.TargetCount(r.Verdict)));
        }
        console.Write(summary);
    }

    /// <summary>Writes the experiment list: name, article, description.</summary>
    public static void WriteList(IAnsiConsole console, IEnumerable<Experiment> experiments)
    {
        var table = new Table().Border(TableBorder.Rounded).AddColumns("name", "article", "description");
        foreach (var e in experiments) table.AddRow(Markup.Escape(e.Name), Markup.Escape(e.Article), Markup.Escape(e.Description));
        console.Write(table);
    }
}
