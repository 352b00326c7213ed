using System.Globalization;

namespace Manaloc.Lab.Harness;

/// <summary>Number formatting shared by verdicts and reporters (invariant culture, 3 significant digits).</summary>
public static class Format
{
    /// <summary>A ratio like <c>12.3x</c>.</summary>
    public static string Ratio(double ratio) => double.IsFinite(ratio) ? $"{Significant(ratio)}x" : "n/a";

    /// <summary>A value with its unit, scaled for reading: <c>1.23 µs/op</c>, <c>4.5 M ops/s</c>, <c>2.1 MB</c>.</summary>
    public static string Value(double value, string unit)
    {
        if (!double.IsFinite(value)) return "n/a";
        return unit switch
        {
            "ns/op" when value >= 1e6 => $"{Significant(value / 1e6)} ms/op",
            "ns/op" when value >= 1e3 => $"{Significant(value / 1e3)} µs/op",
            "ops/s" when value >= 1e9 => $"{Significant(value / 1e9)} G ops/s",
            "ops/s" when value >= 1e6 => $"{Significant(value / 1e6)} M ops/s",
            "ops/s" when value >= 1e3 => $"{Significant(value / 1e3)} k ops/s",
            "bytes" when value >= 1 << 30 => $"{Significant(value / (1 << 30))} GiB",
            "bytes" when value >= 1 << 20 => $"{Significant(value / (1 << 20))} MiB",
            "bytes" when value >= 1 << 10 => $"{Significant(value / (1 << 10))} KiB",
            _ => $"{Significant(value)} {unit}",
        };
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
