using System.Text.Json;
using Manaloc.Lab.Reporting;

namespace Manaloc.Lab.Tests;

/// <summary>The lab's command line, run in-process with captured output.</summary>
public sealed class CommandLineTests : IDisposable
{
    private readonly string _dir = Path.Combine(Path.GetTempPath(), $"manaloc-cli-{Guid.NewGuid():N}");

    public void Dispose()
    {
        if (Directory.Exists(_dir)) Directory.Delete(_dir, recursive: true);
    }

    private static (int Code, string Out, string Err) Run(params string[] args)
    {
        var stdout = new StringWriter();
        var stderr = new StringWriter();
        int code = Program.Run(args, stdout, stderr);
        return (code, stdout.ToString(), stderr.ToString());
    }

    [Fact]
    public void List_names_every_experiment_with_its_article()
    {
        var (code, output, _) = Run("list");
        Assert.Equal(0, code);
        foreach (var e in Manaloc.Lab.Experiments.ExperimentRegistry.All())
        {
            Assert.Contains(e.Name, output);
        }
        Assert.Contains("seed 000", output);
    }

    [Theory]
    [InlineData("run", "no-such-experiment")]
    [InlineData("run", "clock-allocations", "--threads", "1,x")]
    [InlineData("run", "--threads", "0")]
    [InlineData("run", "--threads", "")]
    [InlineData("run", "--quick", "--full")]
    [InlineData("run", "--bogus-option")]
    [InlineData("frobnicate")]
    public void Bad_input_is_one_line_and_exit_code_2(params string[] args)
    {
        string outDir = Path.Combine(_dir, "out");
        var (code, output, error) = Run([.. args, "--out", outDir]);
        Assert.Equal(2, code);
        Assert.Single(error.Split('\n', StringSplitOptions.RemoveEmptyEntries));
        Assert.StartsWith("error: ", error);
        Assert.Equal("", output);
        Assert.False(File.Exists(Path.Combine(outDir, "results.json")));
    }

    [Fact]
    public void Unknown_experiment_error_names_it()
    {
        var (_, _, error) = Run("run", "no-such-experiment", "--out", _dir);
        Assert.Contains("'no-such-experiment'", error);
    }

    [Fact]
    public void Unwritable_out_is_rejected_before_anything_runs()
    {
        Directory.CreateDirectory(_dir);
        string file = Path.Combine(_dir, "a-file");
        File.WriteAllText(file, "x");
        var (code, _, error) = Run("run", "clock-allocations", "--out", Path.Combine(file, "sub"));
        Assert.Equal(2, code);
        Assert.Contains("--out", error);
        Assert.Single(error.Split('\n', StringSplitOptions.RemoveEmptyEntries));
        Assert.Equal("x", File.ReadAllText(file));
    }

    [Fact]
    public void Run_with_json_writes_and_prints_the_same_results()
    {
        var (code, output, error) = Run("run", "clock-allocations", "--json", "--out", _dir);
        Assert.True(code == 0, error);
        var printed = ReportWriter.FromJson(output);
        var written = ReportWriter.FromJson(File.ReadAllText(Path.Combine(_dir, "results.json")));
        Assert.Equal(ReportWriter.ToJson(written), ReportWriter.ToJson(printed));
        var result = Assert.Single(printed.Experiments);
        Assert.Equal("clock-allocations", result.Experiment);
        Assert.Null(result.Error);
        Assert.NotNull(result.ArticleFigure);
        Assert.Contains(result.Measurements, m => m.Variant == "DateTime.Now" && m.AllocatedBytesPerOp is not null);
        Assert.Contains(result.Measurements, m => m.Variant == "Clock.GetTimestamp" && m.AllocatedBytesPerOp == 0);
        Assert.All(result.Measurements, m => Assert.NotNull(m.RatioToBaseline));
        Assert.True(File.Exists(Path.Combine(_dir, "report.md")));
        // No byte-order mark: strict JSON parsers (Python's json.load) reject a file that starts with one.
        Assert.Equal((byte)'{', File.ReadAllBytes(Path.Combine(_dir, "results.json"))[0]);
        using var doc = JsonDocument.Parse(output); // stdout is pure JSON: tables went to stderr
        Assert.Equal("quick", doc.RootElement.GetProperty("mode").GetString());
        Assert.Contains("clock-allocations", error);
    }
}
