using System.Text.RegularExpressions;
using Manaloc.Lab.Harness;
using Manaloc.Lab.Reporting;

namespace Manaloc.Lab.Tests.Reporting;

public sealed class HtmlReportTests : IDisposable
{
    private readonly string _dir = Path.Combine(Path.GetTempPath(), $"manaloc-html-{Guid.NewGuid():N}");

    public void Dispose()
    {
        if (Directory.Exists(_dir)) Directory.Delete(_dir, recursive: true);
    }

    private static Measurement Point(string variant, int threads, double ns) => new()
    {
        Variant = variant, Unit = Unit.NsPerOp, Threads = threads, Parameters = Parameters.Of(("threads", threads)),
        Statistics = Statistics.From(Enumerable.Range(0, 12).Select(i => ns * (1 + i / 100.0)).ToArray()),
    };

    [Fact]
    public void The_page_is_self_contained_with_a_section_per_experiment_and_png_charts()
    {
        var sample = JsonSchemaTests.Sample();
        var result = sample.Experiments[0] with
        {
            Measurements = [Point("old", 1, 100), Point("old", 2, 150), Point("new", 1, 10), Point("new", 2, 12)],
            Verdict = sample.Experiments[0].Verdict with { Low = 9, High = 13, Metric = "new vs old" },
        };
        var written = ReportWriter.Write(sample with { Experiments = [result] }, _dir);

        string html = File.ReadAllText(written.HtmlPath);
        Assert.StartsWith("<!DOCTYPE html>", html, StringComparison.Ordinal);
        Assert.Contains("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">", html, StringComparison.Ordinal);
        Assert.Contains("<section id=\"demo\">", html, StringComparison.Ordinal);
        Assert.Contains("1035 ms → 9 ms", html, StringComparison.Ordinal);     // the claim
        Assert.Contains("11x (9x–13x)", html, StringComparison.Ordinal);       // today with its interval
        Assert.Contains("new vs pool", html, StringComparison.Ordinal);        // a target
        Assert.DoesNotContain("src=\"http", html, StringComparison.Ordinal);
        var images = Regex.Matches(html, "data:image/png;base64,([A-Za-z0-9+/=]+)");
        Assert.Equal(2, images.Count); // the claim and the thread sweep
        foreach (Match image in images)
        {
            byte[] png = Convert.FromBase64String(image.Groups[1].Value);
            Assert.Equal(new byte[] { 0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A }, png[..8]);
        }
    }
}
