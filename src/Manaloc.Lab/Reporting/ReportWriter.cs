using System.Text;
using System.Text.Json;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Reporting;

/// <summary>The files one run wrote.</summary>
/// <param name="JsonPath">results.json.</param>
/// <param name="MarkdownPath">report.md.</param>
/// <param name="ChartPaths">Every chart written.</param>
/// <param name="HtmlPath">report.html.</param>
public sealed record WrittenReport(string JsonPath, string MarkdownPath, IReadOnlyList<string> ChartPaths, string HtmlPath);

/// <summary>
/// Writes results.json, report.md, report.html and charts/ into the output folder, all or nothing: every file is
/// rendered in memory and written to a staging folder first, and only then moved into place.
/// </summary>
public static class ReportWriter
{
    /// <summary>Creates <paramref name="outDir"/> if needed and proves it writable, before any experiment runs.</summary>
    /// <exception cref="IOException">The folder cannot be created or written, with the reason.</exception>
    public static void EnsureWritable(string outDir)
    {
        try
        {
            Directory.CreateDirectory(outDir);
            string probe = Path.Combine(outDir, $".write-probe-{Environment.ProcessId}");
            File.WriteAllText(probe, "");
            File.Delete(probe);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or NotSupportedException or ArgumentException)
        {
            throw new IOException($"--out '{outDir}' is not a writable folder: {e.Message}", e);
        }
    }

    /// <summary>Serializes the report as results.json text.</summary>
    public static string ToJson(LabReport report) => JsonSerializer.Serialize(report, LabJson.Options);

    /// <summary>Reads results.json text back.</summary>
    public static LabReport FromJson(string json)
        => JsonSerializer.Deserialize<LabReport>(json, LabJson.Options) ?? throw new JsonException("results.json is empty.");

    // No byte-order mark: JSON (RFC 8259 §8.1) must not start with one, and strict parsers (Python's json) reject it.
    private static readonly UTF8Encoding Utf8NoBom = new(encoderShouldEmitUTF8Identifier: false);

    /// <summary>Writes the whole report into <paramref name="outDir"/>.</summary>
    public static WrittenReport Write(LabReport report, string outDir)
    {
        var charts = report.Experiments.ToDictionary(r => r.Experiment, r => Charts.For(r));
        string json = ToJson(report);
        string markdown = MarkdownReport.Render(report, charts);
        string html = HtmlReport.Render(report, report.Experiments.ToDictionary(r => r.Experiment, Charts.ForHtml));

        Directory.CreateDirectory(outDir);
        string staging = Path.Combine(outDir, $".staging-{Guid.NewGuid():N}");
        try
        {
            Directory.CreateDirectory(Path.Combine(staging, "charts"));
            File.WriteAllText(Path.Combine(staging, "results.json"), json, Utf8NoBom);
            File.WriteAllText(Path.Combine(staging, "report.md"), markdown, Utf8NoBom);
            File.WriteAllText(Path.Combine(staging, "report.html"), html, Utf8NoBom);
            var chartNames = new List<string>();
            foreach (var chart in charts.Values.SelectMany(c => c))
            {
                File.WriteAllText(Path.Combine(staging, "charts", chart.FileName), chart.Svg, Utf8NoBom);
                chartNames.Add(chart.FileName);
            }
            // Everything rendered and on disk: now swap it in.
            string chartsDir = Path.Combine(outDir, "charts");
            if (Directory.Exists(chartsDir)) Directory.Delete(chartsDir, recursive: true);
            Directory.Move(Path.Combine(staging, "charts"), chartsDir);
            File.Move(Path.Combine(staging, "results.json"), Path.Combine(outDir, "results.json"), overwrite: true);
            File.Move(Path.Combine(staging, "report.md"), Path.Combine(outDir, "report.md"), overwrite: true);
            File.Move(Path.Combine(staging, "report.html"), Path.Combine(outDir, "report.html"), overwrite: true);
            return new WrittenReport(
                Path.Combine(outDir, "results.json"),
                Path.Combine(outDir, "report.md"),
                chartNames.Select(n => Path.Combine(chartsDir, n)).ToArray(),
                Path.Combine(outDir, "report.html"));
        }
        finally
        {
            if (Directory.Exists(staging)) Directory.Delete(staging, recursive: true);
        }
    }

    /// <summary>
    /// The report a <c>run NAME…</c> leaves: <paramref name="fresh"/>'s experiments replace those of the same
    /// name in <paramref name="existing"/>, the others stay as they were (each keeps its own <c>runAt</c>),
    /// in <paramref name="order"/> (the registry's), then any the registry no longer knows. The machine
    /// and start time are the fresh run's.
    /// </summary>
    public static LabReport Merge(LabReport existing, LabReport fresh, IReadOnlyList<string> order)
    {
        ArgumentNullException.ThrowIfNull(existing);
        ArgumentNullException.ThrowIfNull(fresh);
        ArgumentNullException.ThrowIfNull(order);
        var byName = existing.Experiments.ToDictionary(e => e.Experiment, StringComparer.Ordinal);
        foreach (var e in fresh.Experiments) byName[e.Experiment] = e;
        var ordered = order.Where(byName.ContainsKey).Select(n => byName[n])
            .Concat(byName.Values.Where(e => !order.Contains(e.Experiment))).ToArray();
        return fresh with { Experiments = ordered };
    }

    /// <summary>The report in <paramref name="outDir"/>/results.json, or null when there is none or it cannot be read (then a fresh one is written).</summary>
    public static LabReport? TryRead(string outDir, out string? problem)
    {
        problem = null;
        string path = Path.Combine(outDir, "results.json");
        if (!File.Exists(path)) return null;
        try
        {
            var report = FromJson(File.ReadAllText(path));
            if (report.SchemaVersion != LabReport.CurrentSchemaVersion)
            {
                problem = $"{path} has schema version {report.SchemaVersion}; starting a fresh report.";
                return null;
            }
            return report;
        }
        catch (Exception e) when (e is JsonException or IOException or NotSupportedException or ArgumentException)
        {
            problem = $"{path} could not be read ({e.Message}); starting a fresh report.";
            return null;
        }
    }

    /// <summary>Start marker of the results block in README.md.</summary>
    public const string ReadmeStart = "<!-- lab-results:start -->";
    /// <summary>End marker of the results block in README.md.</summary>
    public const string ReadmeEnd = "<!-- lab-results:end -->";

    /// <summary>Replaces the block between the README markers with this run's summary table.</summary>
    /// <exception cref="InvalidDataException">The file lacks the markers.</exception>
    public static void UpdateReadme(string readmePath, LabReport report)
    {
        string text = File.ReadAllText(readmePath);
        int start = text.IndexOf(ReadmeStart, StringComparison.Ordinal);
        int end = text.IndexOf(ReadmeEnd, StringComparison.Ordinal);
        if (start < 0 || end < start)
        {
            throw new InvalidDataException($"{readmePath} has no '{ReadmeStart}' … '{ReadmeEnd}' block to update.");
        }
        var m = report.Machine;
        string block = $"{ReadmeStart}\n_From `{string.Join(' ', "run", report.Mode == RunMode.Full ? "--full" : "--quick")}` on {report.StartedAt:yyyy-MM-dd}: " +
                       $"{m.Os}, {m.Runtime}, {Format.Count(m.ProcessorCount, "processor")}, GC {m.GcMode}._\n\n" +
                       MarkdownReport.SummaryTable(report) + ReadmeEnd;
        string updated = text[..start] + block + text[(end + ReadmeEnd.Length)..];
        string temp = readmePath + ".tmp";
        File.WriteAllText(temp, updated);
        File.Move(temp, readmePath, overwrite: true);
    }
}
