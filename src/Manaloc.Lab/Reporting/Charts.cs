using System.Globalization;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Reporting;

/// <summary>A rendered chart and the file name it is saved under.</summary>
/// <param name="FileName">File name inside the report's <c>charts/</c> folder.</param>
/// <param name="Title">Caption.</param>
/// <param name="Svg">The SVG document.</param>
public sealed record RenderedChart(string FileName, string Title, string Svg);

/// <summary>Turns an experiment's sweep into charts: one per combination of the other parameters.</summary>
public static class Charts
{
    /// <summary>Most charts drawn for one experiment (native-map charts eleven figures, one each).</summary>
    public const int MaxChartsPerExperiment = 12;

    /// <summary>
    /// Charts for <paramref name="result"/> if it sweeps a parameter: x is the swept value, y the
    /// throughput (ops/s) where operations were timed, else the primary metric; one line per variant.
    /// </summary>
    public static IReadOnlyList<RenderedChart> For(ExperimentResult result)
    {
        string? sweep = result.SweepParameter;
        if (sweep is null) return [];
        var usable = result.Measurements
            .Where(m => m.Parameters.TryGetValue(sweep, out var v) && v.IsNumber)
            .ToArray();
        var groups = usable
            .GroupBy(m => (Others: m.Parameters.Without(sweep).Key, Metric: MetricOf(m)))
            .OrderBy(g => g.Key.Others, StringComparer.Ordinal)
            .Take(MaxChartsPerExperiment)
            .ToArray();
        var charts = new List<RenderedChart>();
        foreach (var group in groups)
        {
            if (group.Select(m => m.Parameters[sweep]).Distinct().Count() < 2) continue;
            var series = group
                .GroupBy(m => m.Variant)
                .OrderBy(g => IndexOf(result.Variants, g.Key))
                .Select(g => new ChartSeries(g.Key, g
                    .Select(m => (X: m.Parameters.Double(sweep), Y: ValueOf(m)))
                    .OrderBy(p => p.X).ToArray()))
                .ToArray();
            string title = group.Key.Others.Length == 0 ? result.Experiment : $"{result.Experiment} ({group.Key.Others})";
            string slug = group.Key.Others.Length == 0 ? "" : "-" + Slug(group.Key.Others);
            string svg = SvgChart.Render(title, sweep, group.Key.Metric, series, logX: true);
            charts.Add(new RenderedChart($"{result.Experiment}{slug}.svg", title, svg));
        }
        return charts;
    }

    private static string MetricOf(Measurement m) => m.OpsPerSecond is not null ? "ops/s" : m.Unit.Symbol;

    private static double ValueOf(Measurement m) => m.OpsPerSecond ?? m.Statistics.Median;

    private static int IndexOf(IReadOnlyList<string> list, string value)
    {
        for (int i = 0; i < list.Count; i++) if (list[i] == value) return i;
        return int.MaxValue;
    }


    /// <summary>A file-name-safe form of <paramref name="text"/>.</summary>
    public static string Slug(string text)
    {
        var chars = text.ToLowerInvariant().Select(c => char.IsAsciiLetterOrDigit(c) ? c : '-').ToArray();
        return string.Join('-', new string(chars).Split('-', StringSplitOptions.RemoveEmptyEntries));
    }
}
