using System.Globalization;

namespace Manaloc;

/// <summary>Counts in messages and <c>ToString</c>: "1 item", "2 items", never "1 items".</summary>
internal static class Plural
{
    /// <summary>The count and its noun, singular for one; <paramref name="plural"/> defaults to the singular plus "s".</summary>
    public static string Of(long count, string singular, string? plural = null)
        => $"{count.ToString(CultureInfo.InvariantCulture)} {(count == 1 ? singular : plural ?? singular + "s")}";

    /// <inheritdoc cref="Of(long, string, string?)"/>
    public static string Of(ulong count, string singular, string? plural = null)
        => $"{count.ToString(CultureInfo.InvariantCulture)} {(count == 1 ? singular : plural ?? singular + "s")}";
}
