using Manaloc.Lab.Harness;
using Spectre.Console;

namespace Manaloc.Lab.Reporting;

/// <summary>
/// Terminal output: per experiment a compact table and its verdict, then the summary; and the
/// experiment list. Built to fit 80 columns: five narrow columns, long sentences as wrapped text
/// under the tables (Spectre wraps them between words), the baseline row marked, ratios right-aligned.
/// </summary>
public static class TerminalReport
{
    /// <summary>Marks the baseline variant's row.</summary>
    public const string BaselineMark = "(baseline)";

    /// <summary>Writes a table per experiment and the summary to <paramref name="console"/>.</summary>
    public static void Write(IAnsiConsole console, LabReport report)
    {
        ArgumentNullException.ThrowIfNull(console);
        ArgumentNullException.ThrowIfNull(report);
        foreach (var result in report.Experiments)
        {
            console.Write(new Rule($"[bold]{Markup.Escape(result.Experiment)}[/]").LeftJustified());
            console.MarkupLine($"[dim]{Markup.Escape(result.Article)}[/]");
            foreach (var table in MeasurementTables(result)) console.Write(table);
            foreach (var extra in result.Tables)
            {
                var t = new Table().Border(TableBorder.Simple).Title(Markup.Escape(extra.Title));
                foreach (var c in extra.Columns) t.AddColumn(Markup.Escape(c));
                foreach (var row in extra.Rows) t.AddRow(row.Select(Markup.Escape).ToArray());
                console.Write(t);
            }
            if (result.Headline is { } headline) console.MarkupLine($"[bold]for users:[/] {Markup.Escape(headline.ToString())}");
            if (result.ArticleFigure is { } figure) console.MarkupLine($"article: {Markup.Escape(figure.Text)}");
            console.MarkupLine($"article's claim: [bold]{MarkdownReport.VerdictWord(result.Verdict.Verdict)}[/] — {Markup.Escape(result.Verdict.Text)}");
            foreach (var t in result.Verdict.Targets)
            {
                string color = t.AtFloor ? "green" : t.Met switch { true => "green", false => "red", null => "yellow" };
                console.MarkupLine($"target: {Markup.Escape(t.Name)}: {Markup.Escape(t.TodayText() + t.FloorFigureText())}, goal {Markup.Escape(t.GoalText() + t.FloorGoalText())}: [{color}]{Markup.Escape(t.MetWord())}[/]");
            }
            foreach (var note in result.Notes) console.MarkupLine($"note: {Markup.Escape(note)}");
            if (result.Error is not null) console.MarkupLine($"[red]error:[/] {Markup.Escape(result.Error)}");
            console.WriteLine();
        }
        console.Write(SummaryTable(report));
        if (RunBudget.Describe(report) is { } time) console.WriteLine(time);
    }

    /// <summary>
    /// One table per set of parameters (titled with them): variant (baseline marked), median, B/op, the
    /// ratio to the baseline and its 95% interval. The figures never wrap; the variant column takes what is
    /// left and wraps between words. Percentiles are in report.md and report.html.
    /// </summary>
    internal static IEnumerable<Table> MeasurementTables(ExperimentResult result)
    {
        foreach (var group in result.Measurements.GroupBy(m => m.ParameterKey))
        {
            var table = new Table().Border(TableBorder.Simple)
                .AddColumn("variant")
                .AddColumn(new TableColumn("median").RightAligned().NoWrap())
                .AddColumn(new TableColumn("B/op").RightAligned().NoWrap())
                .AddColumn(new TableColumn("× base").RightAligned().NoWrap())
                .AddColumn(new TableColumn("95% CI").RightAligned().NoWrap());
            if (group.Key.Length > 0) table.Title(Markup.Escape(group.Key));
            foreach (var m in group)
            {
                bool isBaseline = m.Variant == result.Baseline;
                table.AddRow(
                    Markup.Escape(isBaseline ? $"{m.Variant} {BaselineMark}" : m.Variant),
                    Markup.Escape(Format.Value(m.Statistics.Median, m.Unit)),
                    m.AllocatedBytesPerOp is { } b ? Format.Significant(b) : "",
                    m.RatioToBaseline is { } r ? Format.Ratio(r) : "",
                    !isBaseline && m.RatioLow is { } lo && m.RatioHigh is { } hi && lo != hi ? Markup.Escape(Format.Interval(lo, hi, Unit.Ratio)) : "");
            }
            yield return table;
        }
    }

    /// <summary>experiment, the headline for users, the article claim's verdict with today's figure and its interval, targets met.</summary>
    internal static Table SummaryTable(LabReport report)
    {
        var summary = new Table().Border(TableBorder.Rounded).Title("[bold]summary[/]").Expand()
            .AddColumn("experiment").AddColumn("for users").AddColumn("article's claim").AddColumn("targets");
        foreach (var r in report.Experiments)
        {
            summary.AddRow(Markup.Escape(r.Experiment), Markup.Escape(r.Headline?.ToString() ?? "—"),
                Markup.Escape($"{MarkdownReport.VerdictWord(r.Verdict.Verdict)}, {Format.Today(r.Verdict)}"), Markup.Escape(MarkdownReport.TargetCount(r.Verdict)));
        }
        return summary;
    }

    /// <summary>Writes the experiment list: name, then article and description.</summary>
    public static void WriteList(IAnsiConsole console, IEnumerable<Experiment> experiments)
    {
        ArgumentNullException.ThrowIfNull(console);
        ArgumentNullException.ThrowIfNull(experiments);
        var table = new Table().Border(TableBorder.Rounded).Expand().AddColumn("name").AddColumn("article — what is measured");
        foreach (var e in experiments) table.AddRow(Markup.Escape(e.Name), Markup.Escape($"{e.Article} — {e.Description}"));
        console.Write(table);
    }
}
