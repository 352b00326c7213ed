namespace Manaloc.Lab.Experiments;

/// <summary>
/// The payloads that buffer-writer and streams both sweep, 1 KiB to 16 MiB, and how their figures are found: one
/// definition, so the writer's and the stream's tables line up size for size.
/// </summary>
internal static class Payloads
{
    /// <summary>Payload sizes: 1 KiB, 64 KiB, 1 MiB, 16 MiB (smoke: the first two).</summary>
    public static int[] Sizes(RunSettings settings) => settings.IsSmoke ? [1 << 10, 64 << 10] : [1 << 10, 64 << 10, 1 << 20, 16 << 20];

    /// <summary>A size as a label: <c>64 KiB</c>, <c>16 MiB</c>.</summary>
    public static string Label(int size) => size >= 1 << 20 ? $"{size >> 20} MiB" : $"{size >> 10} KiB";

    /// <summary>True for a measurement of <paramref name="size"/> bytes in <paramref name="format"/>.</summary>
    public static bool Is(Measurement m, int size, string format)
        => m.Parameters.Is("size", size) && m.Parameters.Is("format", format);

    /// <summary>The <c>size</c> parameter, with the experiment's own description.</summary>
    public static ParameterSpec SizeParameter(RunSettings settings, string description)
        => new("size", description, Sizes(settings).Select(s => s.ToString(System.Globalization.CultureInfo.InvariantCulture)).ToArray());
}
