using Manaloc.Lab.Harness;
using Manaloc.Lab.Reporting;
using Spectre.Console;

namespace Manaloc.Lab.Tests.Reporting;

public sealed class TerminalOutputTests
{
    [Fact]
    public void Tables_fit_eighty_columns_without_breaking_words_and_mark_the_baseline()
    {
        var report = JsonSchemaTests.Sample();
        var writer = new StringWriter();
        var console = AnsiConsole.Create(new AnsiConsoleSettings
        {
            Out = new AnsiConsoleOutput(writer), Ansi = AnsiSupport.No, ColorSystem = ColorSystemSupport.NoColors, Interactive = InteractionSupport.No,
        });
        console.Profile.Width = 80;

        TerminalReport.Write(console, report);

        string text = writer.ToString();
        var lines = text.Split('\n');
        Assert.All(lines, l => Assert.True(l.TrimEnd('\r').Length <= 80, $"{l.Length} columns: {l}"));
        Assert.Contains($"old {TerminalReport.BaselineMark}", text, StringComparison.Ordinal);
        // Every word of the verdict sentence and the article appears whole on some line.
        var words = report.Experiments[0].Verdict.Text.Split(' ').Concat(report.Experiments[0].Article.Split(' ')).Where(w => w.Length > 1);
        Assert.All(words, w => Assert.Contains(lines, l => l.Contains(w, StringComparison.Ordinal)));
    }

    [Fact]
    public void Plain_progress_writes_timestamped_lines_with_the_declared_estimate_and_throttles_status()
    {
        var clock = new ManualClock();
        var lines = new List<string>();
        var progress = new PlainProgress(lines.Add, clock);

        progress.RunStarted([20, 20]);
        progress.ExperimentStarted("first", 0, 2);
        clock.Advance(TimeSpan.FromSeconds(1));
        progress.Status("first: a");           // too soon after the start line: dropped
        clock.Advance(TimeSpan.FromSeconds(10));
        progress.Status("first: b");           // shown
        clock.Advance(TimeSpan.FromSeconds(9));
        progress.ExperimentFinished(new ExperimentResult
        {
            Experiment = "first", Article = "a", Description = "d", Baseline = "x", ElapsedSeconds = 20,
            Verdict = new VerdictResult(Verdict.Holds, "t"),
        });
        progress.ExperimentStarted("second", 1, 2);

        Assert.Equal(4, lines.Count);
        Assert.All(lines, l => Assert.Matches(@"^\[\d\d:\d\d:\d\d\] ", l));
        Assert.EndsWith("1/2 first: started (elapsed 0:00, about 0:40 left)", lines[0], StringComparison.Ordinal);
        Assert.EndsWith("1/2 first: b", lines[1], StringComparison.Ordinal);
        Assert.EndsWith("1/2 first: holds in 20.0 s (elapsed 0:20, about 0:20 left)", lines[2], StringComparison.Ordinal);
        Assert.EndsWith("2/2 second: started (elapsed 0:20, about 0:20 left)", lines[3], StringComparison.Ordinal);
    }

    private sealed class ManualClock : TimeProvider
    {
        private long _ticks;
        public void Advance(TimeSpan by) => _ticks += by.Ticks;
        public override long TimestampFrequency => TimeSpan.TicksPerSecond;
        public override long GetTimestamp() => _ticks;
        public override DateTimeOffset GetUtcNow() => new DateTimeOffset(2026, 1, 1, 0, 0, 0, TimeSpan.Zero).AddTicks(_ticks);
    }
}
