using System.Net;
using System.Text;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Reporting;

/// <summary>
/// Writes report.html: one self-contained page (styles inline, charts as PNG data URIs) with the
/// summary table and one section per experiment — claim, the article's figure, today's figure,
/// verdict, targets, charts, machine. Laid out for a phone as well as a desktop: one column, tables
/// that scroll sideways inside their box, images that shrink to the width.
/// </summary>
public static class HtmlReport
{
    private const string Style = """
        body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;line-height:1.45;margin:0 auto;max-width:60rem;padding:1rem;color:#1b1b1b}
        h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2.2rem;border-top:1px solid #ccc;padding-top:1rem}
        .scroll{overflow-x:auto}table{border-collapse:collapse;font-size:.9rem;min-width:100%}
        th,td{border:1px solid #ddd;padding:.3rem .5rem;text-align:left;vertical-align:top}td.num{text-align:right;white-space:nowrap}
        img{max-width:100%;height:auto}figure{margin:1rem 0}figcaption{font-size:.85rem;color:#555}
        .v{font-weight:600;padding:0 .3rem;border-radius:.2rem}.holds{background:#d6ecff}.shrinks{background:#ffe7c2}
        .reversed{background:#f8d0d0}.inconclusive,.notcomparable,.measured{background:#e6e6e6}.unstable{background:#f3e0f7}dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem .8rem}
        dt{font-weight:600}dd{margin:0}.met{color:#00589a}.missed{color:#a33}.small{font-size:.85rem;color:#555}
        """;

    /// <summary>Renders the page; <paramref name="charts"/> maps an experiment to its PNG charts.</summary>
    public static string Render(LabReport report, IReadOnlyDictionary<string, IReadOnlyList<PngChart>> charts)
    {
        ArgumentNullException.ThrowIfNull(report);
        ArgumentNullException.ThrowIfNull(charts);
        var sb = new StringBuilder();
        sb.Append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
          .Append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")
          .Append("<title>Manaloc lab report</title><style>").Append(Style).Append("</style></head><body>\n");
        sb.Append("<h1>Manaloc lab report</h1>\n<p class=\"small\">").Append(E(Machine(report.Machine)))
          .Append($". Report started {report.StartedAt:yyyy-MM-dd HH:mm} UTC.</p>\n");
        if (RunBudget.Describe(report) is { } time) sb.Append("<p class=\"small\">").Append(E(time)).Append("</p>\n");
        sb.Append("<p>Verdicts: <b>holds</b> — the article's effect is there, at least half as large; <b>shrinks</b> — smaller or gone; ")
          .Append("<b>reversed</b> — the other way today; <b>inconclusive</b> — today's 95% interval straddles the line; <b>unstable</b> — the launches (processes) disagree beyond their own intervals; <b>measured</b> — measured once, no interval to judge; <b>not comparable</b> — nothing to compare.</p>\n");
        sb.Append("<div class=\"scroll\"><table><thead><tr><th>experiment</th><th>for users (95% CI)</th><th>article's claim</th><th>today (95% CI)</th><th>article</th><th>targets</th></tr></thead><tbody>\n");
        foreach (var r in report.Experiments)
        {
            sb.Append($"<tr><td><a href=\"#{E(r.Experiment)}\">{E(r.Experiment)}</a></td><td>{E(r.Headline?.ToString() ?? "—")}</td><td>{Badge(r.Verdict.Verdict)}</td>")
              .Append($"<td class=\"num\">{E(Format.Today(r.Verdict))}</td><td>{E(ArticleValue(r))}</td><td>{E(MarkdownReport.TargetCount(r.Verdict))}</td></tr>\n");
        }
        sb.Append("</tbody></table></div>\n");
        foreach (var r in report.Experiments) Section(sb, r, charts.GetValueOrDefault(r.Experiment) ?? []);
        sb.Append("</body></html>\n");
        return sb.ToString();
    }

    private static void Section(StringBuilder sb, ExperimentResult r, IReadOnlyList<PngChart> charts)
    {
        sb.Append($"<section id=\"{E(r.Experiment)}\"><h2>{E(r.Experiment)}</h2>\n<p><i>{E(r.Article)}.</i> {E(r.Description)}</p>\n<dl>");
        if (r.Headline is { } headline) sb.Append($"<dt>for users</dt><dd><b>{E(headline.ToString())}</b></dd>");
        if (r.ArticleFigure is { } figure) sb.Append($"<dt>claim</dt><dd>{E(figure.Text)}</dd><dt>article's figure</dt><dd>{E(ArticleValue(r))}</dd>");
        sb.Append($"<dt>today</dt><dd>{E(Format.Today(r.Verdict))}{(r.Verdict.Metric is { } metric ? $" — {E(metric)}" : "")}</dd>");
        sb.Append($"<dt>claim's verdict</dt><dd>{Badge(r.Verdict.Verdict)} {E(r.Verdict.Text)}</dd>");
        sb.Append($"<dt>run</dt><dd>{r.RunAt:yyyy-MM-dd HH:mm} UTC, {RunSettings.NameOf(r.Mode)} mode, {r.ElapsedSeconds:0.0} s; baseline {E(r.Baseline)}</dd>");
        if (r.Error is not null) sb.Append($"<dt>error</dt><dd class=\"missed\">{E(r.Error)}</dd>");
        sb.Append("</dl>\n");
        if (r.Verdict.Targets.Count > 0)
        {
            sb.Append("<div class=\"scroll\"><table><thead><tr><th>target</th><th>today (95% CI)</th><th>goal</th><th></th></tr></thead><tbody>\n");
            foreach (var t in r.Verdict.Targets)
            {
                string css = t.AtFloor ? "met" : t.Met switch { true => "met", false => "missed", null => "" };
                sb.Append($"<tr><td>{E(t.Name)}</td><td class=\"num\">{E(t.TodayText() + t.FloorFigureText())}</td><td class=\"num\">{E(t.GoalText() + t.FloorGoalText())}</td><td class=\"{css}\">{E(t.MetWord())}</td></tr>\n");
            }
            sb.Append("</tbody></table></div>\n");
        }
        foreach (var chart in charts)
        {
            sb.Append($"<figure><img alt=\"{E(chart.Title)}\" src=\"data:image/png;base64,{Convert.ToBase64String(chart.Png)}\" width=\"720\" height=\"400\">")
              .Append($"<figcaption>{E(chart.Title)}. {E(chart.Caption)}</figcaption></figure>\n");
        }
        foreach (var note in r.Notes) sb.Append($"<p class=\"small\">{E(note)}</p>\n");
        sb.Append("</section>\n");
    }

    private static string ArticleValue(ExperimentResult r)
        => r.ArticleFigure is { Value: { } v, Unit: { } u } ? u.Format(v) : "no figure";

    private static string Badge(Verdict v)
    {
        string word = MarkdownReport.VerdictWord(v);
        return $"<span class=\"v {word.Replace(" ", "", StringComparison.Ordinal)}\">{word}</span>";
    }

    private static string Machine(MachineInfo m)
        => $"{m.Os} ({m.Architecture}), {m.Runtime}, {Format.Count(m.ProcessorCount, "processor")} (affinity: {m.AffinityProcessors?.ToString(System.Globalization.CultureInfo.InvariantCulture) ?? "n/a"}; SMT siblings: {m.SmtSiblings ?? "unknown"}), GC {m.GcMode}";

    private static string E(string text) => WebUtility.HtmlEncode(text);
}
