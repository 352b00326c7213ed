using System.Globalization;
using Manaloc.Lab.Harness;
using Spectre.Console;

namespace Manaloc.Lab.Reporting;

/// <summary>
/// Progress while experiments run: on an interactive terminal a live display (experiment i of n,
/// what it measures now, elapsed, an estimate of the rest); otherwise (a pipe, a log file, CI) plain
/// timestamped lines, one when each experiment starts and ends and at most one status line every
/// <see cref="PlainStatusInterval"/> in between.
/// </summary>
public static class TerminalProgress
{
    /// <summary>Least time between two plain status lines.</summary>
    public static readonly TimeSpan PlainStatusInterval = TimeSpan.FromSeconds(10);

    /// <summary>True when a live display makes sense.</summary>
    public static bool IsInteractive(IAnsiConsole console)
    {
        ArgumentNullException.ThrowIfNull(console);
        return console.Profile.Capabilities.Interactive
               && !Console.IsErrorRedirected
               && string.IsNullOrEmpty(Environment.GetEnvironmentVariable("CI"));
    }

    /// <summary>Runs <paramref name="work"/> with a progress sink that drives the display or writes plain lines.</summary>
    public static T Run<T>(IAnsiConsole console, Func<ILabProgress, T> work)
    {
        ArgumentNullException.ThrowIfNull(work);
        if (!IsInteractive(console))
        {
            return work(new PlainProgress(line => console.WriteLine(line), TimeProvider.System));
        }
        T result = default!;
        console.Progress()
            .AutoClear(false)
            .Columns(new TaskDescriptionColumn { Alignment = Justify.Left }, new ProgressBarColumn(), new ElapsedTimeColumn(), new RemainingTimeColumn(), new SpinnerColumn())
            .Start(ctx =>
            {
                var sink = new LiveSink(ctx);
                result = work(sink);
                sink.Complete();
            });
        return result;
    }

    private sealed class LiveSink(ProgressContext context) : ILabProgress
    {
        private ProgressTask? _overall;
        private ProgressTask? _current;
        private string _name = "";

        public void ExperimentStarted(string name, int index, int count)
        {
            _overall ??= context.AddTask("experiments", maxValue: count);
            _overall.Value = index;
            _overall.Description = $"experiment {index + 1} of {count}";
            _current?.StopTask();
            _name = name;
            _current = context.AddTask(Markup.Escape(name), maxValue: 1);
            _current.IsIndeterminate = true;
        }

        public void Status(string text)
        {
            if (_current is not null) _current.Description = Markup.Escape(Truncate(text, 48));
        }

        public void ExperimentFinished(ExperimentResult result)
        {
            if (_current is null) return;
            _current.Description = Markup.Escape($"{_name}: {MarkdownReport.VerdictWord(result.Verdict.Verdict)}");
            _current.IsIndeterminate = false;
            _current.Value = 1;
            _current.StopTask();
            _overall?.Increment(1);
        }

        public void Complete() => _overall?.StopTask();

        private static string Truncate(string text, int max) => text.Length <= max ? text : text[..(max - 1)] + "…";
    }
}

/// <summary>
/// Plain progress lines for a pipe or a log: <c>[12:03:04] 3/18 heap-contention: started (elapsed 0:41, about 1:50 left)</c>.
/// The estimate assumes the remaining experiments take as long on average as the finished ones.
/// </summary>
internal sealed class PlainProgress(Action<string> writeLine, TimeProvider clock) : ILabProgress
{
    private readonly long _start = clock.GetTimestamp();
    private long _lastStatus;
    private int _index;
    private int _count;
    private string _name = "";

    public void ExperimentStarted(string name, int index, int count)
    {
        (_name, _index, _count) = (name, index, count);
        _lastStatus = clock.GetTimestamp();
        Write($"{index + 1}/{count} {name}: started ({Times()})");
    }

    public void Status(string text)
    {
        long now = clock.GetTimestamp();
        if (clock.GetElapsedTime(_lastStatus, now) < TerminalProgress.PlainStatusInterval) return;
        _lastStatus = now;
        Write($"{_index + 1}/{_count} {text}");
    }

    public void ExperimentFinished(ExperimentResult result)
    {
        _index++;
        Write($"{_index}/{_count} {_name}: {MarkdownReport.VerdictWord(result.Verdict.Verdict)} in {result.ElapsedSeconds.ToString("0.0", CultureInfo.InvariantCulture)} s ({Times()})");
    }

    private string Times()
    {
        var elapsed = clock.GetElapsedTime(_start);
        string text = $"elapsed {Clock(elapsed)}";
        if (_index == 0 || _count == 0) return text;
        var left = elapsed / _index * (_count - _index);
        return $"{text}, about {Clock(left)} left";
    }

    private static string Clock(TimeSpan t) => $"{(int)t.TotalMinutes}:{t.Seconds:00}";

    private void Write(string line) => writeLine($"[{clock.GetUtcNow():HH:mm:ss}] {line}");
}
