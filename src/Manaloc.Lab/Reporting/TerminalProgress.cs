using System.Globalization;
using Manaloc.Lab.Harness;
using Spectre.Console;
using Spectre.Console.Rendering;

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
        var tracker = new RunTracker(TimeProvider.System);
        console.Progress()
            .AutoClear(false)
            .Columns(new TaskDescriptionColumn { Alignment = Justify.Left }, new ProgressBarColumn(), new ElapsedTimeColumn(), new LeftColumn(tracker), new SpinnerColumn())
            .Start(ctx =>
            {
                var sink = new LiveSink(ctx, tracker);
                result = work(sink);
                sink.Complete();
            });
        return result;
    }

    /// <summary>"m:ss" for the progress lines and the live display.</summary>
    internal static string Clock(TimeSpan t) => $"{(int)t.TotalMinutes}:{t.Seconds:00}";

    /// <summary>The run's time left (<see cref="RunEstimate"/>) on the overall row; Spectre's own column extrapolates the bar's rate, which jumps.</summary>
    private sealed class LeftColumn(RunTracker tracker) : ProgressColumn
    {
        protected override bool NoWrap => true;

        public override IRenderable Render(RenderOptions options, ProgressTask task, TimeSpan deltaTime)
            => new Text(task.Description.StartsWith("experiment ", StringComparison.Ordinal) && tracker.Remaining() is { } left ? $"~{Clock(left)} left" : "");
    }

    private sealed class LiveSink(ProgressContext context, RunTracker tracker) : ILabProgress
    {
        private ProgressTask? _overall;
        private ProgressTask? _current;
        private string _name = "";

        public void RunStarted(IReadOnlyList<double> expectedSeconds) => tracker.RunStarted(expectedSeconds);

        public void ExperimentStarted(string name, int index, int count)
        {
            tracker.ExperimentStarted();
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
            tracker.ExperimentFinished();
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
/// What the progress displays know of the run: when it and the running experiment started, what the
/// finished experiments took, and from those and the declared costs the time left (<see cref="RunEstimate"/>).
/// Called from the thread that runs the experiments; the live display reads <see cref="Remaining"/> from
/// its refresh thread, so the finished list is replaced, never changed in place, and the fields are
/// read and written whole (a stale read shows the previous estimate for one refresh).
/// </summary>
internal sealed class RunTracker(TimeProvider clock)
{
    private readonly long _start = clock.GetTimestamp();
    private volatile double[] _expected = [];
    private volatile double[] _finished = [];
    private long _currentStart = -1;

    public TimeSpan Elapsed => clock.GetElapsedTime(_start);

    public void RunStarted(IReadOnlyList<double> expectedSeconds) => _expected = [.. expectedSeconds];

    public void ExperimentStarted() => Volatile.Write(ref _currentStart, clock.GetTimestamp());

    public void ExperimentFinished()
    {
        long started = Volatile.Read(ref _currentStart);
        double seconds = started < 0 ? 0 : clock.GetElapsedTime(started).TotalSeconds;
        Volatile.Write(ref _currentStart, -1);
        var finished = _finished;
        if (finished.Length < _expected.Length) _finished = [.. finished, seconds];
    }

    /// <summary>The time left; null before the run declared its experiments' costs.</summary>
    public TimeSpan? Remaining()
    {
        double[] expected = _expected, finished = _finished;
        if (expected.Length == 0) return null;
        long started = Volatile.Read(ref _currentStart);
        double running = started < 0 || finished.Length >= expected.Length ? 0 : clock.GetElapsedTime(started).TotalSeconds;
        return TimeSpan.FromSeconds(RunEstimate.RemainingSeconds(expected, finished, running));
    }
}

/// <summary>
/// Plain progress lines for a pipe or a log: <c>[12:03:04] 3/18 heap-contention: started (elapsed 0:41, about 1:50 left)</c>.
/// The estimate is <see cref="RunEstimate"/>'s: the declared costs of the experiments left, scaled by the run's pace.
/// </summary>
internal sealed class PlainProgress(Action<string> writeLine, TimeProvider clock) : ILabProgress
{
    private readonly RunTracker _tracker = new(clock);
    private long _lastStatus;
    private int _index;
    private int _count;
    private string _name = "";

    public void RunStarted(IReadOnlyList<double> expectedSeconds) => _tracker.RunStarted(expectedSeconds);

    public void ExperimentStarted(string name, int index, int count)
    {
        (_name, _index, _count) = (name, index, count);
        _tracker.ExperimentStarted();
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
        _tracker.ExperimentFinished();
        _index++;
        Write($"{_index}/{_count} {_name}: {MarkdownReport.VerdictWord(result.Verdict.Verdict)} in {result.ElapsedSeconds.ToString("0.0", CultureInfo.InvariantCulture)} s ({Times()})");
    }

    private string Times()
    {
        string text = $"elapsed {TerminalProgress.Clock(_tracker.Elapsed)}";
        return _tracker.Remaining() is { } left && _index < _count ? $"{text}, about {TerminalProgress.Clock(left)} left" : text;
    }

    private void Write(string line) => writeLine($"[{clock.GetUtcNow():HH:mm:ss}] {line}");
}
