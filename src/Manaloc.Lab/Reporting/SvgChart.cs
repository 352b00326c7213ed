using System.Globalization;
using System.Xml.Linq;

namespace Manaloc.Lab.Reporting;

/// <summary>One line of a chart: a name and its (x, y) points.</summary>
/// <param name="Name">Legend text.</param>
/// <param name="Points">Points in ascending x.</param>
public sealed record ChartSeries(string Name, IReadOnlyList<(double X, double Y)> Points);

/// <summary>
/// A line chart written as standalone SVG: axes with round ticks, one coloured line with markers per
/// series, a legend. Hand-written because no charting package restores here (docs/dependencies.md).
/// </summary>
public static class SvgChart
{
    private static readonly string[] Palette =
        ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"];

    private const int PlotWidth = 480, Height = 420, Left = 80, Top = 40, Bottom = 56;

    /// <summary>Renders the chart. X values are placed on a log₂ scale when <paramref name="logX"/> (thread counts, sizes).</summary>
    public static string Render(string title, string xLabel, string yLabel, IReadOnlyList<ChartSeries> series, bool logX = false)
    {
        ArgumentNullException.ThrowIfNull(series);
        var all = series.SelectMany(s => s.Points).Where(p => double.IsFinite(p.X) && double.IsFinite(p.Y)).ToArray();
        if (all.Length == 0) throw new ArgumentException("A chart needs at least one finite point.", nameof(series));
        if (logX && all.Any(p => p.X <= 0)) logX = false;

        double Tx(double x) => logX ? Math.Log2(x) : x;
        double xMin = all.Min(p => Tx(p.X)), xMax = all.Max(p => Tx(p.X));
        if (xMax == xMin) { xMin -= 1; xMax += 1; }
        double yMax = NiceCeiling(all.Max(p => p.Y));
        double yMin = Math.Min(0, all.Min(p => p.Y));
        if (yMax <= yMin) yMax = yMin + 1;

        // The legend column is as wide as the longest name needs (about 7 px a character at 12 px).
        int right = Math.Max(200, 60 + 7 * series.Max(x => x.Name.Length));
        int width = Left + PlotWidth + right;
        double plotW = PlotWidth, plotH = Height - Top - Bottom;
        double Px(double x) => Left + (Tx(x) - xMin) / (xMax - xMin) * plotW;
        double Py(double y) => Top + plotH - (y - yMin) / (yMax - yMin) * plotH;

        XNamespace ns = "http://www.w3.org/2000/svg";
        var svg = new XElement(ns + "svg",
            new XAttribute("width", width), new XAttribute("height", Height),
            new XAttribute("viewBox", $"0 0 {width} {Height}"),
            new XAttribute("font-family", "DejaVu Sans, Arial, sans-serif"), new XAttribute("font-size", 12));
        svg.Add(new XElement(ns + "rect", new XAttribute("width", width), new XAttribute("height", Height), new XAttribute("fill", "white")));
        svg.Add(Text(ns, width / 2.0, 22, title, 15, "middle", bold: true));

        // Y grid and ticks.
        foreach (double tick in Ticks(yMin, yMax, 5))
        {
            double y = Py(tick);
            svg.Add(Line(ns, Left, y, Left + plotW, y, "#e5e5e5"));
            svg.Add(Text(ns, Left - 6, y + 4, TickLabel(tick), 11, "end"));
        }
        // X ticks at the data's x values.
        foreach (double x in all.Select(p => p.X).Distinct().OrderBy(v => v))
        {
            double px = Px(x);
            svg.Add(Line(ns, px, Top + plotH, px, Top + plotH + 5, "#333"));
            svg.Add(Text(ns, px, Top + plotH + 18, TickLabel(x), 11, "middle"));
        }
        svg.Add(Line(ns, Left, Top, Left, Top + plotH, "#333"));
        svg.Add(Line(ns, Left, Top + plotH, Left + plotW, Top + plotH, "#333"));
        svg.Add(Text(ns, Left + plotW / 2, Height - 12, xLabel, 12, "middle"));
        var yTitle = Text(ns, 16, Top + plotH / 2, yLabel, 12, "middle");
        yTitle.Add(new XAttribute("transform", $"rotate(-90 16 {F(Top + plotH / 2)})"));
        svg.Add(yTitle);

        for (int i = 0; i < series.Count; i++)
        {
            string colour = Palette[i % Palette.Length];
            var points = series[i].Points.Where(p => double.IsFinite(p.X) && double.IsFinite(p.Y)).OrderBy(p => p.X).ToArray();
            if (points.Length > 1)
            {
                svg.Add(new XElement(ns + "polyline",
                    new XAttribute("points", string.Join(' ', points.Select(p => $"{F(Px(p.X))},{F(Py(p.Y))}"))),
                    new XAttribute("fill", "none"), new XAttribute("stroke", colour), new XAttribute("stroke-width", 2)));
            }
            foreach (var p in points)
            {
                svg.Add(new XElement(ns + "circle", new XAttribute("cx", F(Px(p.X))), new XAttribute("cy", F(Py(p.Y))),
                    new XAttribute("r", 3.5), new XAttribute("fill", colour)));
            }
            double ly = Top + 10 + i * 20;
            svg.Add(Line(ns, width - right + 16, ly, width - right + 40, ly, colour, 3));
            svg.Add(Text(ns, width - right + 46, ly + 4, series[i].Name, 12, "start"));
        }
        return new XDocument(svg).ToString();
    }

    /// <summary>Round tick values from <paramref name="min"/> to <paramref name="max"/>.</summary>
    public static IReadOnlyList<double> Ticks(double min, double max, int approximateCount)
    {
        double step = NiceStep((max - min) / Math.Max(1, approximateCount));
        var ticks = new List<double>();
        for (double t = Math.Ceiling(min / step) * step; t <= max + step * 1e-9; t += step)
        {
            ticks.Add(Math.Round(t / step) * step);
        }
        return ticks;
    }

    /// <summary>The smallest 1, 2 or 5 × 10ⁿ at or above <paramref name="value"/>.</summary>
    public static double NiceCeiling(double value)
    {
        if (value <= 0) return 1;
        double magnitude = Math.Pow(10, Math.Floor(Math.Log10(value)));
        foreach (double m in new[] { 1, 2, 2.5, 5, 10 })
        {
            if (m * magnitude >= value) return m * magnitude;
        }
        return 10 * magnitude;
    }

    private static double NiceStep(double raw)
    {
        if (raw <= 0) return 1;
        double magnitude = Math.Pow(10, Math.Floor(Math.Log10(raw)));
        double r = raw / magnitude;
        return (r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10) * magnitude;
    }

    private static string TickLabel(double value)
    {
        double abs = Math.Abs(value);
        return abs >= 1e9 ? $"{F(value / 1e9)}G" : abs >= 1e6 ? $"{F(value / 1e6)}M" : abs >= 1e3 ? $"{F(value / 1e3)}k" : F(value);
    }

    private static string F(double v) => Math.Round(v, 2).ToString("0.##", CultureInfo.InvariantCulture);

    private static XElement Line(XNamespace ns, double x1, double y1, double x2, double y2, string colour, double width = 1)
        => new(ns + "line", new XAttribute("x1", F(x1)), new XAttribute("y1", F(y1)), new XAttribute("x2", F(x2)),
            new XAttribute("y2", F(y2)), new XAttribute("stroke", colour), new XAttribute("stroke-width", width));

    private static XElement Text(XNamespace ns, double x, double y, string text, int size, string anchor, bool bold = false)
    {
        var e = new XElement(ns + "text", new XAttribute("x", F(x)), new XAttribute("y", F(y)),
            new XAttribute("font-size", size), new XAttribute("text-anchor", anchor), text);
        if (bold) e.Add(new XAttribute("font-weight", "bold"));
        return e;
    }
}
