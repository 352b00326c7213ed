using System.Globalization;

namespace Manaloc.Lab.Harness;

/// <summary>Builds the parameter dictionaries of <see cref="Measurement.Parameters"/>.</summary>
public static class Parameters
{
    /// <summary>No parameters.</summary>
    public static IReadOnlyDictionary<string, string> None { get; } = new Dictionary<string, string>();

    /// <summary>Parameters from name/value pairs, formatted with the invariant culture.</summary>
    public static IReadOnlyDictionary<string, string> Of(params (string Name, object Value)[] pairs)
    {
        var result = new Dictionary<string, string>(pairs.Length, StringComparer.Ordinal);
        foreach (var (name, value) in pairs)
        {
            result[name] = Convert.ToString(value, CultureInfo.InvariantCulture) ?? "";
        }
        return result;
    }
}
