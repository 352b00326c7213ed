using System.Text.Json;
using System.Text.Json.Serialization;

namespace Manaloc.Lab.Harness;

/// <summary>What a unit measures, which decides how its values scale for reading.</summary>
public enum UnitKind
{
    /// <summary>A duration; the base is the nanosecond (ns, µs, ms, s).</summary>
    Time,
    /// <summary>A size in bytes, shown in binary multiples (B, KiB, MiB, GiB).</summary>
    Size,
    /// <summary>Events per second (k, M, G).</summary>
    Rate,
    /// <summary>A ratio of two like figures, shown as <c>12.3x</c>.</summary>
    Ratio,
    /// <summary>A percentage.</summary>
    Percent,
    /// <summary>A count or any other unit, shown as is.</summary>
    Other,
}

/// <summary>
/// A unit of measure: a kind, the factor from one of these units to the kind's base (nanoseconds,
/// bytes, events per second) and what it is per (<c>/op</c>, <c>/call</c>). Every figure the lab
/// prints is formatted through its unit, so a value is scaled the same way in every table, chart
/// and sentence. Written to JSON as its symbol (<c>ns/op</c>, <c>bytes</c>, <c>x</c>).
/// </summary>
/// <remarks>
/// A string converts to a unit implicitly (<see cref="Parse"/>), so <c>RecordSamples(v, "ms", …)</c>
/// still reads naturally; a symbol the lab does not know becomes a unit of kind <see cref="UnitKind.Other"/>.
/// Two units are equal when their symbols are.
/// </remarks>
/// <param name="Symbol">As written in JSON and in tables, e.g. <c>ns/op</c>.</param>
/// <param name="Kind">What the unit measures.</param>
/// <param name="ToBase">One of this unit in the kind's base (nanoseconds, bytes, per second).</param>
/// <param name="Per">The denominator, e.g. <c>/op</c>; empty when none.</param>
[JsonConverter(typeof(UnitJsonConverter))]
public sealed record Unit(string Symbol, UnitKind Kind, double ToBase = 1, string Per = "")
{
    /// <summary>Nanoseconds per operation.</summary>
    public static Unit NsPerOp { get; } = new("ns/op", UnitKind.Time, 1, "/op");
    /// <summary>Nanoseconds.</summary>
    public static Unit Nanoseconds { get; } = new("ns", UnitKind.Time, 1);
    /// <summary>Microseconds.</summary>
    public static Unit Microseconds { get; } = new("µs", UnitKind.Time, 1e3);
    /// <summary>Milliseconds.</summary>
    public static Unit Milliseconds { get; } = new("ms", UnitKind.Time, 1e6);
    /// <summary>Seconds.</summary>
    public static Unit Seconds { get; } = new("s", UnitKind.Time, 1e9);
    /// <summary>Bytes.</summary>
    public static Unit Bytes { get; } = new("bytes", UnitKind.Size);
    /// <summary>Bytes per operation.</summary>
    public static Unit BytesPerOp { get; } = new("B/op", UnitKind.Size, 1, "/op");
    /// <summary>Bytes per call.</summary>
    public static Unit BytesPerCall { get; } = new("B/call", UnitKind.Size, 1, "/call");
    /// <summary>Operations per second.</summary>
    public static Unit OpsPerSecond { get; } = new("ops/s", UnitKind.Rate, 1, " ops/s");
    /// <summary>A ratio, <c>x</c>.</summary>
    public static Unit Ratio { get; } = new("x", UnitKind.Ratio);
    /// <summary>Percent.</summary>
    public static Unit Percent { get; } = new("%", UnitKind.Percent);

    private static readonly Unit[] Known =
    [
        NsPerOp, Nanoseconds, Microseconds, Milliseconds, Seconds, Bytes, BytesPerOp, BytesPerCall, OpsPerSecond, Ratio, Percent,
        new("µs/op", UnitKind.Time, 1e3, "/op"), new("ms/op", UnitKind.Time, 1e6, "/op"), new("B", UnitKind.Size),
        new("KiB", UnitKind.Size, 1024), new("MiB", UnitKind.Size, 1024 * 1024),
    ];

    /// <summary>The unit with this symbol; an unknown symbol gives a unit of kind <see cref="UnitKind.Other"/>.</summary>
    /// <exception cref="ArgumentException">The symbol is empty.</exception>
    public static Unit Parse(string symbol)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(symbol);
        foreach (var unit in Known)
        {
            if (unit.Symbol == symbol) return unit;
        }
        return new Unit(symbol, UnitKind.Other);
    }

    /// <summary>A unit from its symbol (see <see cref="Parse"/>).</summary>
    public static implicit operator Unit(string symbol) => Parse(symbol);

    /// <summary>True when a smaller value is the better one by default (time, bytes); false for rates and ratios.</summary>
    public bool LowerIsBetter => Kind is UnitKind.Time or UnitKind.Size;

    /// <summary>A value with its unit, scaled for reading: <c>1.23 µs/op</c>, <c>4.5 M ops/s</c>, <c>2.1 MiB</c>, <c>12.3x</c>.</summary>
    public string Format(double value)
    {
        if (!double.IsFinite(value)) return "n/a";
        double v = value * ToBase;
        double a = Math.Abs(v);
        return Kind switch
        {
            UnitKind.Ratio => $"{Harness.Format.Significant(value)}x",
            UnitKind.Percent => $"{Harness.Format.Significant(value)} %",
            UnitKind.Time when a >= 1e9 => Scaled(v / 1e9, "s"),
            UnitKind.Time when a >= 1e6 => Scaled(v / 1e6, "ms"),
            UnitKind.Time when a >= 1e3 => Scaled(v / 1e3, "µs"),
            UnitKind.Time => Scaled(v, "ns"),
            UnitKind.Size when a >= 1 << 30 => Scaled(v / (1 << 30), "GiB"),
            UnitKind.Size when a >= 1 << 20 => Scaled(v / (1 << 20), "MiB"),
            UnitKind.Size when a >= 1 << 10 => Scaled(v / (1 << 10), "KiB"),
            UnitKind.Size => Scaled(v, "B"),
            UnitKind.Rate when a >= 1e9 => Scaled(v / 1e9, "G"),
            UnitKind.Rate when a >= 1e6 => Scaled(v / 1e6, "M"),
            UnitKind.Rate when a >= 1e3 => Scaled(v / 1e3, "k"),
            UnitKind.Rate => $"{Harness.Format.Significant(v)}{Per}",
            _ => $"{Harness.Format.Significant(value)} {Symbol}",
        };
    }

    /// <summary>The unit a chart axis shows for values divided by <paramref name="divisor"/> (see <see cref="AxisScale"/>).</summary>
    public string AxisLabel(double divisor) => Kind switch
    {
        UnitKind.Time => $"{TimeName(divisor * 1)}{Per}",
        UnitKind.Size => $"{SizeName(divisor)}{Per}",
        UnitKind.Rate => divisor switch { 1e9 => "G", 1e6 => "M", 1e3 => "k", _ => "" } + Per.TrimStart(),
        _ => Symbol,
    };

    /// <summary>The divisor (in base units) that brings <paramref name="typical"/> (in this unit) to a readable magnitude.</summary>
    public double AxisScale(double typical)
    {
        double a = Math.Abs(typical * ToBase);
        return Kind switch
        {
            UnitKind.Time => a >= 1e9 ? 1e9 : a >= 1e6 ? 1e6 : a >= 1e3 ? 1e3 : 1,
            UnitKind.Size => a >= 1 << 30 ? 1 << 30 : a >= 1 << 20 ? 1 << 20 : a >= 1 << 10 ? 1 << 10 : 1,
            UnitKind.Rate => a >= 1e9 ? 1e9 : a >= 1e6 ? 1e6 : a >= 1e3 ? 1e3 : 1,
            _ => 1,
        };
    }

    private static string TimeName(double ns) => ns switch { 1e9 => "s", 1e6 => "ms", 1e3 => "µs", _ => "ns" };

    private static string SizeName(double bytes) => bytes switch { 1 << 30 => "GiB", 1 << 20 => "MiB", 1 << 10 => "KiB", _ => "B" };

    private string Scaled(double v, string prefix)
        => Kind == UnitKind.Rate ? $"{Harness.Format.Significant(v)} {prefix} {Per.TrimStart()}" : $"{Harness.Format.Significant(v)} {prefix}{Per}";

    /// <summary>Same symbol (the symbol decides the rest: <see cref="Parse"/> maps a known symbol to its one unit).</summary>
    public bool Equals(Unit? other) => other is not null && other.Symbol == Symbol;
    /// <inheritdoc/>
    public override int GetHashCode() => Symbol.GetHashCode(StringComparison.Ordinal);
    /// <inheritdoc/>
    public override string ToString() => Symbol;
}

/// <summary>Writes a <see cref="Unit"/> as its symbol and reads it back.</summary>
internal sealed class UnitJsonConverter : JsonConverter<Unit>
{
    public override Unit Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options)
        => Unit.Parse(reader.GetString() ?? throw new JsonException("A unit must be a string."));

    public override void Write(Utf8JsonWriter writer, Unit value, JsonSerializerOptions options)
        => writer.WriteStringValue(value.Symbol);
}
