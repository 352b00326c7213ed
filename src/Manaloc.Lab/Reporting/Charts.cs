using System.Globalization;
using Manaloc.Lab.Harness;
using ScottPlot;

namespace Manaloc.Lab.Reporting;

/// <summary>A chart rendered as PNG for report.html.</summary>
/// <param name="Title">Caption above the chart.</param>
/// <param name="Caption">What is drawn: the statistic and its error bars.</param>
/// <param name="Png">The image.</param>
public sealed record PngChart(string Title, string Caption, byte[] Png);

/// <summary>A chart rendered as SVG for report.md, and the file name it is saved under.</summary>
/// <param name="FileName">File name inside the report's <c>charts/</c> folder.</param>
/// <param name="Title">Caption.</param>
/// <param name="Svg">The SVG document.</param>
public sealed record RenderedChart(string FileName, string Title, string Svg);

/// <summary>
/// The lab's one chart renderer, ScottPlot, for both reports: report.html gets PNGs inline, report.md SVG files of the same
/// sweep charts. Today's claim figure with its 95% interval beside the article's figure (a dashed reference line), for the
/// page; and, for an experiment that sweeps a parameter, the median of each variant against it with p10–p90 error bars
/// (one chart per combination of the other parameters and unit). Units on both axes (binary sizes, scaled times),
/// logarithmic axes where the figures span two decades or more, a colour-blind-safe palette.
/// </summary>
public static class Charts
{
    /// <summary>Most charts drawn for one experiment (native-map charts eleven figures, one each).</summary>
    public const int MaxChartsPerExperiment = 12;

    private const int Width = 720;
    private const int Height = 400;

    /// <summary>The charts of report.html for one experiment's result (none when it measured nothing chartable).</summary>
    public static IReadOnlyList<PngChart> ForHtml(ExperimentResult result)
    {
        ArgumentNullException.ThrowIfNull(result);
        var charts = new List<PngChart>();
        if (ClaimChart(result) is { } claim) charts.Add(claim);
        charts.AddRange(SweepPlots(result).Select(c => new PngChart(c.Title, SweepCaption, c.Plot.GetImageBytes(Width, Height, ImageFormat.Png))));
        return charts;
    }

    /// <summary>The sweep charts of report.md for one experiment's result, as SVG files (none when it sweeps nothing).</summary>
    public static IReadOnlyList<RenderedChart> For(ExperimentResult result)
    {
        ArgumentNullException.ThrowIfNull(result);
        return [.. SweepPlots(result).Select(c => new RenderedChart($"{result.Experiment}{c.Slug}.svg", c.Title, c.Plot.GetSvgXml(Width, Height)))];
    }

    private const string SweepCaption = "Median of each variant's samples; error bars from p10 to p90 where there are at least 10 samples.";

    /// <summary>A file-name-safe form of <paramref name="text"/>.</summary>
    public static string Slug(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        var chars = text.ToLowerInvariant().Select(c => char.IsAsciiLetterOrDigit(c) ? c : '-').ToArray();
        return string.Join('-', new string(chars).Split('-', StringSplitOptions.RemoveEmptyEntries));
    }

    private static PngChart? ClaimChart(ExperimentResult result)
    {
        var v = result.Verdict;
        if (v.TodayValue is not { } today || v.TodayUnit is not { } unit) return null;
        double low = v.Low ?? today, high = v.High ?? today;
        double? article = result.ArticleFigure?.Value;
        if (article is null && low == high) return null; // one number, nothing beside it: the text says it all
        var values = new List<double> { today, low, high };
        if (article is { } a) values.Add(a);
        bool log = values.All(x => x > 0) && values.Max() / values.Min() >= 100;
        double scale = log ? 1 : unit.AxisScale(values.Max(Math.Abs));
        double Y(double x) => log ? Math.Log10(x) : x * unit.ToBase / scale;

        var plot = NewPlot();
        var marker = plot.Add.Markers(new[] { 0.0 }, new[] { Y(today) });
        marker.MarkerSize = 12;
        marker.LegendText = "today (median-based), 95% CI";
        var bar = plot.Add.ErrorBar(new[] { 0.0 }, new[] { Y(today) }, new[] { 0.0 });
        bar.YErrorNegative = new[] { Y(today) - Y(low) };
        bar.YErrorPositive = new[] { Y(high) - Y(today) };
        bar.Color = marker.Color;
        if (article is { } published && (!log || published > 0))
        {
            var line = plot.Add.HorizontalLine(Y(published));
            line.LinePattern = LinePattern.Dashed;
            line.LegendText = $"article: {unit.Format(published)}";
        }
        plot.Axes.Bottom.TickGenerator = new ScottPlot.TickGenerators.NumericManual(new[] { 0.0 }, new[] { "today" });
        plot.Axes.SetLimitsX(-1, 1);
        SetY(plot, unit, scale, log, "today's figure");
        plot.ShowLegend(Edge.Bottom);
        return new PngChart($"{result.Experiment}: {v.Metric ?? "the claim"}", "Today's figure (from medians) with its 95% bootstrap confidence interval; the dashed line is the article's figure.", plot.GetImageBytes(Width, Height, ImageFormat.Png));
    }

    private static IEnumerable<(string Title, string Slug, Plot Plot)> SweepPlots(ExperimentResult result)
    {
        string? sweep = result.SweepParameter;
        if (sweep is null) yield break;
        var groups = result.Measurements
            .Where(m => m.Parameters.TryGetValue(sweep, out var x) && x.IsNumber)
            .GroupBy(m => (Others: m.Parameters.Without(sweep).Key, m.Unit))
            .Where(g => g.Select(m => m.Parameters[sweep]).Distinct().Count() >= 2)
            .OrderBy(g => g.Key.Others, StringComparer.Ordinal)
            .Take(MaxChartsPerExperiment)
            .ToArray();
        // One chart per unit only needs the unit in its file name when the same other parameters come in two units.
        bool unitInName = groups.GroupBy(g => g.Key.Others).Any(g => g.Count() > 1);
        foreach (var group in groups)
        {
            var unit = group.Key.Unit;
            var ys = group.SelectMany(m => new[] { m.Statistics.Median, m.Statistics.P10, m.Statistics.P90 }).Where(double.IsFinite).ToArray();
            var xs = group.Select(m => X(m, sweep)).ToArray();
            bool logY = ys.All(y => y > 0) && ys.Max() / ys.Min() >= 100;
            bool logX = xs.All(x => x > 0) && xs.Max() / xs.Min() >= 4;
            double scale = logY ? 1 : unit.AxisScale(ys.Max(Math.Abs));
            double Y(double y) => logY ? Math.Log10(y) : y * unit.ToBase / scale;
            double Xt(double x) => logX ? Math.Log2(x) : x;

            var plot = NewPlot();
            foreach (var variant in group.GroupBy(m => m.Variant).OrderBy(g => Index(result.Variants, g.Key)))
            {
                var points = variant.OrderBy(m => X(m, sweep)).ToArray();
                var px = points.Select(m => Xt(X(m, sweep))).ToArray();
                var py = points.Select(m => Y(m.Statistics.Median)).ToArray();
                var line = plot.Add.Scatter(px, py);
                line.LegendText = variant.Key == result.Baseline ? $"{variant.Key} (baseline)" : variant.Key;
                if (points.All(m => double.IsFinite(m.Statistics.P10)))
                {
                    var bars = plot.Add.ErrorBar(px, py, new double[px.Length]);
                    bars.YErrorNegative = points.Select((m, i) => py[i] - Y(m.Statistics.P10)).ToArray();
                    bars.YErrorPositive = points.Select((m, i) => Y(m.Statistics.P90) - py[i]).ToArray();
                    bars.Color = line.Color;
                }
            }
            // Ticks at the values measured only: a thread count of 1.5 means nothing.
            var ticks = xs.Distinct().Order().ToArray();
            plot.Axes.Bottom.TickGenerator = new ScottPlot.TickGenerators.NumericManual(ticks.Select(Xt).ToArray(), ticks.Select(t => t.ToString(CultureInfo.InvariantCulture)).ToArray());
            plot.XLabel(logX ? $"{sweep} (log scale)" : sweep);
            SetY(plot, unit, scale, logY, "median");
            plot.ShowLegend(Edge.Right);
            string others = group.Key.Others.Length == 0 ? "" : $" ({group.Key.Others})";
            string slug = string.Concat(group.Key.Others.Length == 0 ? "" : "-" + Slug(group.Key.Others), unitInName ? "-" + Slug(unit.Symbol) : "");
            yield return ($"{result.Experiment}{others}", slug, plot);
        }
    }

    private static Plot NewPlot()
    {
        var plot = new Plot();
        plot.Add.Palette = new ScottPlot.Palettes.ColorblindFriendly();
        return plot;
    }

    private static void SetY(Plot plot, Unit unit, double scale, bool log, string statistic)
    {
        if (log)
        {
            plot.Axes.Left.TickGenerator = new ScottPlot.TickGenerators.NumericAutomatic
            {
                MinorTickGenerator = new ScottPlot.TickGenerators.LogMinorTickGenerator(),
                IntegerTicksOnly = true,
                LabelFormatter = y => unit.Format(Math.Pow(10, y)),
            };
            plot.YLabel($"{statistic} (log scale)");
        }
        else
        {
            plot.YLabel($"{statistic} ({unit.AxisLabel(scale)})");
        }
    }

    private static double X(Measurement m, string sweep) => m.Parameters.Double(sweep);

    private static int Index(IReadOnlyList<string> list, string value)
    {
        for (int i = 0; i < list.Count; i++) if (list[i] == value) return i;
        return list.Count;
    }
}
