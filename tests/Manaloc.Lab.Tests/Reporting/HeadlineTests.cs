using Manaloc.Lab.Experiments;
using Manaloc.Lab.Harness;
using Manaloc.Lab.Reporting;
using Manaloc.Lab.Tests.Experiments;
using Spectre.Console;

namespace Manaloc.Lab.Tests.Reporting;

/// <summary>Every experiment declares what it means for a user; every report shows it beside the article claim's verdict.</summary>
public sealed class HeadlineTests
{
    [Theory]
    [MemberData(nameof(EverySmokeTests.Names), MemberType = typeof(EverySmokeTests))]
    public void Every_experiment_declares_a_user_headline_apart_from_its_claim(string name)
    {
        var experiment = ExperimentRegistry.Find(name)!;
        var headline = experiment.Headline;
        Assert.NotNull(headline);
        Assert.False(string.IsNullOrWhiteSpace(headline.Figure.Name));
        Assert.All(headline.Beside, m => Assert.False(string.IsNullOrWhiteSpace(m.Name)));
        // The headline is the user's figure, not the article claim's under another name.
        Assert.NotEqual(experiment.Claim?.Today.Name, headline.Figure.Name);
    }

    [Fact]
    public void The_typed_memory_headline_is_the_struct_handles_pause_with_the_weakest_path_beside_it()
    {
        var headline = new TypedMemory().Headline;
        Assert.Contains("struct handles", headline.Figure.Name, StringComparison.Ordinal);
        Assert.Contains("full gen-2 pause", headline.Figure.Name, StringComparison.Ordinal);
        Assert.Single(headline.Beside);
        Assert.Contains("weakest path", headline.Beside[0].Name, StringComparison.Ordinal);
    }

    private static Measurement Samples(string variant, string op, params double[] samples) => new()
    {
        Variant = variant, Unit = Unit.Milliseconds, Parameters = Parameters.Of(("op", op)), Statistics = Statistics.From(samples),
    };

    [Fact]
    public void Evaluation_gives_each_figure_its_point_and_interval_and_marks_the_unmeasured()
    {
        var measurements = new[]
        {
            Samples("class", "full-gc", 100, 110, 120, 90, 105),
            Samples("struct", "full-gc", 1, 1.1, 0.9, 1.05, 0.95),
        };
        var headline = new Headline(
            new Metric("struct pause share", Unit.Ratio, f => f.Median("struct") / f.Median("class")),
            new Metric("missing path share", Unit.Ratio, f => f.Median("missing") / f.Median("class")));

        var result = HeadlineResult.Evaluate(headline, measurements, seed: 7);

        Assert.Equal(1.0 / 105, result.Figure.Value!.Value, 9);
        Assert.True(result.Figure.Low <= result.Figure.Value && result.Figure.Value <= result.Figure.High);
        Assert.True(result.Figure.Low < result.Figure.High);
        Assert.Null(result.Beside[0].Value);
        Assert.Contains("missing path share: not measured", result.ToString(), StringComparison.Ordinal);
        Assert.StartsWith("struct pause share: 0.00952x (", result.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public void A_failed_run_keeps_the_headline_unmeasured_and_the_runner_fills_it_in()
    {
        var ok = ExperimentRunner.Run(new Fixed(fail: false), RunSettings.Smoke());
        Assert.Equal(2.0, ok.Headline!.Figure.Value);
        var failed = ExperimentRunner.Run(new Fixed(fail: true), RunSettings.Smoke());
        Assert.NotNull(failed.Headline);
        Assert.Null(failed.Headline.Figure.Value);
    }

    [Fact]
    public void Terminal_markdown_and_html_show_the_headline_and_the_article_verdict()
    {
        var report = JsonSchemaTests.Sample();
        var result = report.Experiments[0];
        string headline = result.Headline!.Figure.Name;
        string verdict = result.Verdict.Text;

        var writer = new StringWriter();
        var console = AnsiConsole.Create(new AnsiConsoleSettings
        {
            Out = new AnsiConsoleOutput(writer), Ansi = AnsiSupport.No, ColorSystem = ColorSystemSupport.NoColors, Interactive = InteractionSupport.No,
        });
        console.Profile.Width = 200;
        TerminalReport.Write(console, report);
        string terminal = writer.ToString();
        Assert.Contains($"for users: {headline}: 11x (10x–12.5x)", terminal, StringComparison.Ordinal);
        Assert.Contains("weakest path, the same: not measured", terminal, StringComparison.Ordinal);
        Assert.Contains($"article's claim: holds — {verdict}", terminal, StringComparison.Ordinal);

        string markdown = MarkdownReport.Render(report, new Dictionary<string, IReadOnlyList<RenderedChart>>());
        Assert.Contains($"- For users: **{headline}: 11x (10x–12.5x)", markdown, StringComparison.Ordinal);
        Assert.Contains($"**Holds** — {verdict}", markdown, StringComparison.Ordinal);
        Assert.Contains("| demo | new vs old, time per call (times as fast): 11x (10x–12.5x)", MarkdownReport.SummaryTable(report), StringComparison.Ordinal);
        Assert.Contains("| holds |", MarkdownReport.SummaryTable(report), StringComparison.Ordinal);

        string html = HtmlReport.Render(report, new Dictionary<string, IReadOnlyList<PngChart>>());
        Assert.Contains($"<dt>for users</dt><dd><b>{headline}: 11x (10x–12.5x)", html, StringComparison.Ordinal);
        Assert.Contains(">holds</span> new 11x faster", html, StringComparison.Ordinal);
    }

    private sealed class Fixed(bool fail) : Experiment("fixed", "none", "two variants", ["a", "b"], "a", quickSeconds: 1)
    {
        public override Headline Headline => new(Metric.TimesBetter("b vs a", "b", "a"));

        public override void Run(ExperimentContext context)
        {
            context.RecordSamples("a", "ms", [2.0, 2.0, 2.0], Parameters.Of());
            context.RecordSamples("b", "ms", [1.0, 1.0, 1.0], Parameters.Of());
            if (fail) throw new InvalidOperationException("broken on purpose");
        }
    }
}
