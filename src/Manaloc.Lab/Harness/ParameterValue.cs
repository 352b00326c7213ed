using System.Globalization;

namespace Manaloc.Lab.Harness;

/// <summary>What a <see cref="ParameterValue"/> holds.</summary>
public enum ParameterKind
{
    /// <summary>Text (a mode, an operation, a scenario).</summary>
    Text,
    /// <summary>A whole number (<see cref="int"/> or <see cref="long"/>).</summary>
    Integer,
    /// <summary>A real number (<see cref="double"/>).</summary>
    Real,
    /// <summary>True or false.</summary>
    Boolean,
    /// <summary>A length of time (<see cref="TimeSpan"/>).</summary>
    Duration,
}

/// <summary>
/// One parameter's value, kept as the type it was given in: a whole or real number, text, a flag or a length of time.
/// Experiments read it back through typed accessors (<see cref="AsInt"/>, <see cref="AsDouble"/>, …) and compare it
/// with <c>==</c>, which compares numbers as numbers; it becomes text only for the report and results.json.
/// </summary>
/// <remarks>
/// Immutable, so safe to share between threads. Whole and real numbers are equal when their values are (2 equals 2.0),
/// so a figure recorded as an <see cref="int"/> and read back from JSON matches the number an experiment looks for.
/// Text never equals a number: the comparison is by type, not by spelling.
/// </remarks>
public readonly struct ParameterValue : IEquatable<ParameterValue>
{
    private readonly object? _value; // string, long, double, bool or TimeSpan; null only in default(ParameterValue)

    private ParameterValue(object value) => _value = value;

    /// <summary>What the value holds (text for <c>default</c>).</summary>
    public ParameterKind Kind => _value switch
    {
        long => ParameterKind.Integer,
        double => ParameterKind.Real,
        bool => ParameterKind.Boolean,
        TimeSpan => ParameterKind.Duration,
        _ => ParameterKind.Text,
    };

    /// <summary>True for <c>default(ParameterValue)</c>, which holds nothing and is never a parameter.</summary>
    public bool IsEmpty => _value is null;

    /// <summary>True for whole and real numbers.</summary>
    public bool IsNumber => _value is long or double;

    /// <summary>A whole number.</summary>
    public static implicit operator ParameterValue(int value) => new((long)value);
    /// <summary>A whole number.</summary>
    public static implicit operator ParameterValue(long value) => new(value);
    /// <summary>A real number; it must be finite (a parameter names a setting, and NaN equals nothing).</summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is NaN or infinite.</exception>
    public static implicit operator ParameterValue(double value)
        => double.IsFinite(value) ? new(value) : throw new ArgumentOutOfRangeException(nameof(value), value, "A parameter's number must be finite.");
    /// <summary>Text.</summary>
    /// <exception cref="ArgumentNullException">The text is null.</exception>
    public static implicit operator ParameterValue(string value) => new(value ?? throw new ArgumentNullException(nameof(value), "A parameter's text cannot be null."));
    /// <summary>True or false.</summary>
    public static implicit operator ParameterValue(bool value) => new(value);
    /// <summary>A length of time.</summary>
    public static implicit operator ParameterValue(TimeSpan value) => new(value);

    /// <summary>The whole number, checked to fit an <see cref="int"/>.</summary>
    /// <exception cref="InvalidOperationException">The value is not a whole number, or is outside the range of <see cref="int"/>.</exception>
    public int AsInt()
        => _value is long l && l is >= int.MinValue and <= int.MaxValue ? (int)l
            : throw new InvalidOperationException($"The parameter value {Describe()} is not a whole number that fits an int.");

    /// <summary>The whole number.</summary>
    /// <exception cref="InvalidOperationException">The value is not a whole number.</exception>
    public long AsLong() => _value is long l ? l : throw new InvalidOperationException($"The parameter value {Describe()} is not a whole number.");

    /// <summary>The number, whole or real.</summary>
    /// <exception cref="InvalidOperationException">The value is not a number.</exception>
    public double AsDouble() => _value switch
    {
        long l => l,
        double d => d,
        _ => throw new InvalidOperationException($"The parameter value {Describe()} is not a number."),
    };

    /// <summary>The text.</summary>
    /// <exception cref="InvalidOperationException">The value is not text (use <see cref="ToString"/> for any value's text).</exception>
    public string AsText() => _value is string s ? s : throw new InvalidOperationException($"The parameter value {Describe()} is not text.");

    /// <summary>The flag.</summary>
    /// <exception cref="InvalidOperationException">The value is not true or false.</exception>
    public bool AsBool() => _value is bool b ? b : throw new InvalidOperationException($"The parameter value {Describe()} is not true or false.");

    /// <summary>The length of time.</summary>
    /// <exception cref="InvalidOperationException">The value is not a length of time.</exception>
    public TimeSpan AsDuration() => _value is TimeSpan t ? t : throw new InvalidOperationException($"The parameter value {Describe()} is not a length of time.");

    /// <summary>
    /// The value as the report and results.json show it, in the invariant culture: numbers in their shortest exact form,
    /// <c>true</c>/<c>false</c>, a length of time as <c>[d.]hh:mm:ss[.fffffff]</c>.
    /// </summary>
    public override string ToString() => _value switch
    {
        long l => l.ToString(CultureInfo.InvariantCulture),
        double d => d.ToString("R", CultureInfo.InvariantCulture),
        bool b => b ? "true" : "false",
        TimeSpan t => t.ToString("c", CultureInfo.InvariantCulture),
        string s => s,
        _ => "",
    };

    /// <summary>
    /// The value written as <paramref name="text"/> by <see cref="ToString"/>: text that is exactly how a number, a flag or
    /// a length of time is written reads back as one. What reading results.json and a child's result line uses; a
    /// parameter cannot be text that reads as another type (<see cref="Parameters.Of"/> refuses it), so every value
    /// comes back as the type it was recorded in.
    /// </summary>
    public static ParameterValue Parse(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        if (long.TryParse(text, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out long l) && l.ToString(CultureInfo.InvariantCulture) == text) return l;
        if (double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out double d) && double.IsFinite(d) && d.ToString("R", CultureInfo.InvariantCulture) == text) return d;
        if (text is "true") return true;
        if (text is "false") return false;
        if (TimeSpan.TryParseExact(text, "c", CultureInfo.InvariantCulture, out var t) && t.ToString("c", CultureInfo.InvariantCulture) == text) return t;
        return text;
    }

    /// <summary>True when both are numbers of equal value, or of the same other kind and equal.</summary>
    public bool Equals(ParameterValue other) => (_value, other._value) switch
    {
        (long a, long b) => a == b,
        (long or double, long or double) => AsDouble() == other.AsDouble(),
        (string a, string b) => string.Equals(a, b, StringComparison.Ordinal),
        (bool a, bool b) => a == b,
        (TimeSpan a, TimeSpan b) => a == b,
        (null, null) => true,
        _ => false,
    };

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is ParameterValue other && Equals(other);

    /// <inheritdoc/>
    public override int GetHashCode() => _value switch
    {
        long l => ((double)l).GetHashCode(), // as a double, so that 2 and 2.0 hash alike
        double d => d.GetHashCode(),
        null => 0,
        var v => v.GetHashCode(),
    };

    /// <summary>Typed equality (see <see cref="Equals(ParameterValue)"/>).</summary>
    public static bool operator ==(ParameterValue left, ParameterValue right) => left.Equals(right);

    /// <summary>Typed inequality.</summary>
    public static bool operator !=(ParameterValue left, ParameterValue right) => !left.Equals(right);

    private string Describe() => $"'{this}' ({Kind.ToString().ToLowerInvariant()})";
}
