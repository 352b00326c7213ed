using System.Xml.Linq;
using Manaloc.Lab.Harness;
using Manaloc.Lab.Reporting;

namespace Manaloc.Lab.Tests.Reporting;

public sealed class ReportTests : IDisposable
{
    private readonly string _dir = Path.Combine(Path.GetTempPath(), $"manaloc-report-{Guid.NewGuid():N}");

    public void Dispose()
    {
        if (Directory.Exists(_dir)) Directory.Delete(_dir, recursive: true);
    }

    [Fact]
    public void Sweeps_get_a_chart_with_one_line_per_variant()
    {
        var result = JsonSchemaTests.Sample().Experiments[0] with
        {
            Measurements =
            [
                Point("old", 1, 100), Point("old", 2, 150), Point("old", 4, 160),
                Point("new", 1, 200), Point("new", 2, 390), Point("new", 4, 400),
            ],
        };
        var charts = Charts.For(result);
        var chart = Assert.Single(charts);
        Assert.Equal("demo.svg", chart.FileName);
        var svg = XDocument.Parse(chart.Svg);
        Assert.Equal("svg", svg.Root!.Name.LocalName);
        // The same renderer draws the page's charts: the claim chart, then this sweep chart, as PNG.
        var png = Charts.ForHtml(result);
        Assert.Contains(png, c => c.Title == chart.Title);
        Assert.All(png, c => Assert.Equal(new byte[] { 0x89, 0x50, 0x4E, 0x47 }, c.Png.Take(4).ToArray()));
    }

    [Fact]
    public void One_chart_per_unit_gets_the_unit_in_its_file_name_only_when_two_units_share_the_parameters()
    {
        var result = JsonSchemaTests.Sample().Experiments[0] with
        {
            Measurements =
            [
                Point("old", 1, 100), Point("old", 2, 150),
                Point("old", 1, 100) with { Unit = Unit.Bytes }, Point("old", 2, 150) with { Unit = Unit.Bytes },
            ],
        };
        var names = Charts.For(result).Select(c => c.FileName).ToArray();
        Assert.Equal(2, names.Length);
        Assert.Equal(names.Length, names.Distinct().Count());
    }

    [Fact]
    public void No_sweep_no_chart()
    {
        var result = JsonSchemaTests.Sample().Experiments[0] with { SweepParameter = null };
        Assert.Empty(Charts.For(result));
    }

    [Fact]
    public void Writer_puts_json_markdown_and_charts_in_place_and_leaves_no_staging()
    {
        var report = JsonSchemaTests.Sample() with
        {
            Experiments = [JsonSchemaTests.Sample().Experiments[0] with { Measurements = [Point("old", 1, 1), Point("old", 2, 2)] }],
        };
        var written = ReportWriter.Write(report, _dir);
        Assert.True(File.Exists(written.JsonPath));
        Assert.Equal(ReportWriter.ToJson(report), File.ReadAllText(written.JsonPath));
        string md = File.ReadAllText(written.MarkdownPath);
        Assert.Contains("| demo | new vs old, time per call (times as fast): 11x (10x–12.5x) [weakest path, the same: not measured] | 1035 ms → 9 ms | 11x | holds |", md);
        Assert.Contains("**Holds** — new 11x faster", md);
        Assert.Contains("![demo](charts/demo.svg)", md);
        Assert.Single(written.ChartPaths);
        Assert.Empty(Directory.GetDirectories(_dir, ".staging-*"));
    }

    [Fact]
    public void Readme_block_is_replaced_and_the_rest_kept()
    {
        Directory.CreateDirectory(_dir);
        string readme = Path.Combine(_dir, "README.md");
        File.WriteAllText(readme, $"# Title\nbefore\n{ReportWriter.ReadmeStart}\nold table\n{ReportWriter.ReadmeEnd}\nafter\n");
        ReportWriter.UpdateReadme(readme, JsonSchemaTests.Sample());
        string text = File.ReadAllText(readme);
        Assert.StartsWith("# Title\nbefore\n", text);
        Assert.EndsWith($"{ReportWriter.ReadmeEnd}\nafter\n", text);
        Assert.DoesNotContain("old table", text);
        Assert.Contains("| demo |", text);

        File.WriteAllText(readme, "no markers");
        Assert.Throws<InvalidDataException>(() => ReportWriter.UpdateReadme(readme, JsonSchemaTests.Sample()));
        Assert.Equal("no markers", File.ReadAllText(readme));
    }

    private static Measurement Point(string variant, int threads, double opsPerSecond) => new()
    {
        Variant = variant,
        Unit = "ns/op",
        Threads = threads,
        Statistics = Statistics.From([1e9 / opsPerSecond]),
        OpsPerSecond = opsPerSecond,
        Parameters = Parameters.Of(("threads", threads)),
    };
}
