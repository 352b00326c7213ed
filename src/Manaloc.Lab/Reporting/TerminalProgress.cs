using Manaloc.Lab.Harness;
using Spectre.Console;

namespace Manaloc.Lab.Reporting;

/// <summary>
/// A live progress display on an interactive terminal (a bar over experiments and a status line);
/// silent when output is redirected or the CI variable is set.
/// </summary>
public static class TerminalProgress
{
    /// <summary>True when a live display makes sense.</summary>
    public static bool IsInteractive(IAnsiConsole console)
        => console.Profile.Capabilities.Interactive
           && !Console.IsOutputRedirected
           && string.IsNullOrEmpty(Environment.GetEnvironmentVariable("CI"));

    /// <summary>Runs <paramref name="work"/> with a progress sink that drives the display (or shows nothing).</summary>
    public static T Run<T>(IAnsiConsole console, Func<ILabProgress, T> work)
    {
        if (!IsInteractive(console))
        {
            return work(NullProgress.Instance);
        }
        T result = default!;
        console.Progress()
            .AutoClear(false)
            .Columns(new TaskDescriptionColumn(), new ProgressBarColumn(), new PercentageColumn(), new ElapsedTimeColumn(), new SpinnerColumn())
            .Start(ctx =>
            {
                var sink = new Sink(ctx);
                result = work(sink);
                sink.Complete();
            });
        return result;
    }

    private sealed class Sink(ProgressContext context) : ILabProgress
    {
        private ProgressTask? _overall;
        private ProgressTask? _current;

        public void ExperimentStarted(string name, int index, int count)
        {
            _overall ??= context.AddTask("experiments", maxValue: count);
            _overall.Value = index;
            _overall.Description = $"experiment {index + 1}/{count}";
            _current?.StopTask();
            _current = context.AddTask(Markup.Escape(name), maxValue: 1);
            _current.IsIndeterminate = true;
        }

        public void Status(string text)
        {
            if (_current is not null) _current.Description = Markup.Escape(Truncate(text, 60));
        }

        public void ExperimentFinished(ExperimentResult result)
        {
            if (_current is null) return;
            _current.Description = Markup.Escape($"{result.Experiment}: {MarkdownReport.VerdictWord(result.Verdict.Verdict)} ({result.ElapsedSeconds:0.0} s)");
            _current.IsIndeterminate = false;
            _current.Value = 1;
            _current.StopTask();
            if (_overall is not null) _overall.Increment(1);
        }

        public void Complete() => _overall?.StopTask();

        private static string Truncate(string text, int max) => text.Length <= max ? text : text[..(max - 1)] + "…";
    }
}
