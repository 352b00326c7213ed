using System.Text.Json;
using System.Text.Json.Serialization;

namespace Manaloc.Lab.Harness;

/// <summary>The one JSON shape of the lab's records (results.json and child results).</summary>
public static class LabJson
{
    /// <summary>Indented, camelCase, enums as strings; NaN and infinities written as named literals.</summary>
    public static JsonSerializerOptions Options { get; } = Create(indented: true);

    /// <summary>As <see cref="Options"/> but on one line.</summary>
    public static JsonSerializerOptions CompactOptions { get; } = Create(indented: false);

    private static JsonSerializerOptions Create(bool indented)
    {
        var options = new JsonSerializerOptions
        {
            WriteIndented = indented,
            PropertyNamingPolicy = JsonNamingPolicy.CamelCase,
            NumberHandling = JsonNumberHandling.AllowNamedFloatingPointLiterals,
            DefaultIgnoreCondition = JsonIgnoreCondition.Never,
        };
        options.Converters.Add(new JsonStringEnumConverter(JsonNamingPolicy.CamelCase));
        options.MakeReadOnly(populateMissingResolver: true);
        return options;
    }
}
