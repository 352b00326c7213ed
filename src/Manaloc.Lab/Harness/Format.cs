using System.Globalization;

namespace Manaloc.Lab.Harness;

/// <summary>Number formatting shared by verdicts and reporters (invariant culture, 3 significant digits).</summary>
public static class Format
{
    /// <summary>A ratio like <c>12.3x</c>.</summary>
    public static string Ratio(double ratio) => double.IsFinite(ratio) ? $"{Significant(ratio)}x" : "n/a";

    /// <summary>A value with its unit, scaled for reading: <c>1.23 µs/op</c>, <c>4.5 M ops/s</c>, <c>2.1 MiB</c> (see <see cref="Unit.Format"/>).</summary>
    public static string Value(double value, Unit unit)
    {
        ArgumentNullException.ThrowIfNull(unit);
        return unit.Format(value);
    }

    /// <summary>An interval such as <c>1.2x–1.5x</c> or <c>3.1–3.4 ms</c>.</summary>
    public static string Interval(double low, double high, Unit unit)
    {
        ArgumentNullException.ThrowIfNull(unit);
        return $"{unit.Format(low)}–{unit.Format(high)}";
    }

    /// <summary>A figure with its interval: <c>25.9x (23.4x–32.4x)</c>; just the figure when the interval is a point; "n/a" when missing.</summary>
    public static string Estimate(double? point, double? low, double? high, Unit? unit)
    {
        if (point is not { } p || unit is null) return "n/a";
        return low is { } l && high is { } h && l != h ? $"{unit.Format(p)} ({Interval(l, h, unit)})" : unit.Format(p);
    }

    /// <summary>Today's figure of a verdict with its interval (see <see cref="Estimate"/>).</summary>
    public static string Today(VerdictResult verdict)
    {
        ArgumentNullException.ThrowIfNull(verdict);
        return Estimate(verdict.TodayValue, verdict.Low, verdict.High, verdict.TodayUnit);
    }

    /// <summary>
    /// A count and its noun, singular for one: <c>1 item</c>, <c>0 items</c>, <c>12,000 items</c> with
    /// <paramref name="format"/> <c>N0</c>. <paramref name="plural"/> defaults to the singular plus "s".
    /// </summary>
    public static string Count(long count, string singular, string? plural = null, string? format = null)
    {
        ArgumentNullException.ThrowIfNull(singular);
        string number = count.ToString(format, CultureInfo.InvariantCulture);
        return $"{number} {(count == 1 ? singular : plural ?? singular + "s")}";
    }

    /// <summary>Three significant digits, no exponent for everyday magnitudes.</summary>
    public static string Significant(double value)
    {
        if (!double.IsFinite(value)) return "n/a";
        if (value == 0) return "0";
        double abs = Math.Abs(value);
        string format = abs >= 100 ? "0" : abs >= 10 ? "0.#" : abs >= 1 ? "0.##" : abs >= 0.01 ? "0.###" : "0.#####";
        return value.ToString(abs >= 1e7 ? "0.##e0" : format, CultureInfo.InvariantCulture);
    }
}
