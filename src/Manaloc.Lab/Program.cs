using System.CommandLine;
using System.CommandLine.Parsing;
using Manaloc.Lab.Experiments;
using Manaloc.Lab.Harness;
using Manaloc.Lab.Reporting;
using Spectre.Console;

namespace Manaloc.Lab;

/// <summary>The lab's command line: <c>list</c>, <c>run [names…]</c> (the default) and the hidden <c>child</c>.</summary>
public static class Program
{
    /// <summary>Exit code for bad input: unknown experiment, malformed option, unwritable output.</summary>
    public const int UsageError = 2;

    /// <summary>Entry point.</summary>
    public static int Main(string[] args) => Run(args, Console.Out, Console.Error);

    /// <summary>Runs the command line with the given output writers; returns the exit code.</summary>
    public static int Run(string[] args, TextWriter stdout, TextWriter stderr)
    {
        if (args is ["soak", ..]) return Soak.SoakCommand.Run(args[1..], stdout, stderr); // lab soak --minutes N | --seconds N
        if (args is [ChildCommand.Verb, ..]) return RunChild(args[1..], stdout, stderr); // internal: the lab's own children (ChildCommand)
        return RunCommandLine(args, stdout, stderr);
    }

    /// <summary>The user's commands, through the command-line parser: a method of its own, so that a child, which never
    /// reaches it, does not load the parser's types when <see cref="Run"/> is compiled.</summary>
    private static int RunCommandLine(string[] args, TextWriter stdout, TextWriter stderr)
    {
        var parse = BuildCommandLine(stdout, stderr).Parse(args);
        if (parse.Errors.Count > 0)
        {
            stderr.WriteLine($"error: {parse.Errors[0].Message}");
            return UsageError;
        }
        return parse.Invoke(new InvocationConfiguration
        {
            Output = stdout,
            Error = stderr,
            // The run handles Ctrl+C itself (no report on cancel) and lets exceptions surface as crashes of the lab,
            // not as exit code 1, which means "an experiment reported an error".
            ProcessTerminationTimeout = null,
            EnableDefaultExceptionHandler = false,
        });
    }

    /// <summary>The command tree, each command with its action; actions write to the given writers.</summary>
    internal static RootCommand BuildCommandLine(TextWriter stdout, TextWriter stderr)
    {
        var names = new Argument<string[]>("names") { Description = "Experiments to run (default: all). See 'list'.", Arity = ArgumentArity.ZeroOrMore };
        var quick = new Option<bool>("--quick") { Description = "Short warm-up and few samples: every experiment in seconds (the default)." };
        var full = new Option<bool>("--full") { Description = "Longer warm-up, more and longer samples, larger sizes." };
        // Hidden: for the tests, which run every experiment end to end from a build of the lab; its figures mean little.
        var smoke = new Option<bool>("--smoke") { Description = "Smallest sizes, two samples, one launch: proves every experiment runs (tests).", Hidden = true };
        var threads = new Option<string?>("--threads") { Description = "Thread counts for sweeps, e.g. 1,2,4 (default: 1, powers of two, processors, 2x processors)." };
        var output = new Option<string>("--out") { Description = "Folder for results.json, report.md and charts/.", DefaultValueFactory = _ => Path.Combine("artifacts", "lab") };
        var json = new Option<bool>("--json") { Description = "Also print results.json to stdout (tables then go to stderr)." };
        var readme = new Option<string?>("--readme") { Description = "Also rewrite the results block of this README.md." };
        var launches = new Option<int?>("--launches") { Description = "Processes each experiment runs in, one after another (default: 3 in quick mode, 5 in full; 1 runs it in this process)." };

        var run = new Command("run", "Run experiments and write the report. Named experiments update their entries in the report already in --out's default folder and leave the others; with --out given, or with no names, the report is written afresh.");
        run.Arguments.Add(names);
        foreach (var option in new Option[] { quick, full, smoke, threads, output, json, readme, launches }) run.Options.Add(option);

        var list = new Command("list", "List the experiments: name, article, description.");

        var before = new Argument<string>("A.json") { Description = "The first results.json (before, or one machine)." };
        var after = new Argument<string>("B.json") { Description = "The second results.json (after, or the other machine)." };
        var compare = new Command("compare", "Set two results.json side by side: each experiment's figures in both, their ratio, and whether the change is outside the noise (95% intervals).");
        compare.Arguments.Add(before);
        compare.Arguments.Add(after);

        var root = new RootCommand("Manaloc lab: reruns the articles' experiments on this machine and sets their figures beside today's. Also: 'soak --minutes N' (or --seconds N) runs every component together under random load, checking invariants.");
        foreach (var option in new Option[] { quick, full, smoke, threads, output, json, readme, launches }) root.Options.Add(option);
        root.Subcommands.Add(run);
        root.Subcommands.Add(list);
        root.Subcommands.Add(compare);

        // Every command has an action, so the parser never demands a subcommand: no arguments runs every
        // experiment in quick mode (the README's command). Help and version are options with actions of their
        // own; they print and return before any experiment runs or any report is touched.
        var runOptions = new RunOptions(quick, full, smoke, threads, output, json, readme, launches);
        root.SetAction(p => RunExperiments(p, runOptions, requested: [], stdout, stderr));
        run.SetAction(p => RunExperiments(p, runOptions, p.GetValue(names) ?? [], stdout, stderr));
        list.SetAction(_ =>
        {
            TerminalReport.WriteList(ConsoleOn(stdout), ExperimentRegistry.All());
            return 0;
        });
        compare.SetAction(p => CompareReports(p.GetValue(before)!, p.GetValue(after)!, stdout, stderr));

        return root;
    }

    /// <summary>The options that <c>run</c> and the root command share.</summary>
    private sealed record RunOptions(Option<bool> Quick, Option<bool> Full, Option<bool> Smoke, Option<string?> Threads, Option<string> Output, Option<bool> Json, Option<string?> Readme, Option<int?> Launches);

    private static bool TryReadThreads(ParseResult parse, Option<string?> threads, TextWriter stderr, out IReadOnlyList<int>? threadCounts, out int usage)
    {
        threadCounts = null;
        usage = 0;
        if (parse.GetValue(threads) is not { } threadText) return true;
        try
        {
            threadCounts = RunSettings.ParseThreadCounts(threadText);
            return true;
        }
        catch (FormatException e)
        {
            usage = Usage(stderr, e.Message);
            return false;
        }
    }

    private static int RunExperiments(ParseResult parse, RunOptions options, string[] requested, TextWriter stdout, TextWriter stderr)
    {
        bool quick = parse.GetValue(options.Quick), full = parse.GetValue(options.Full), smoke = parse.GetValue(options.Smoke);
        if ((quick ? 1 : 0) + (full ? 1 : 0) + (smoke ? 1 : 0) > 1)
        {
            return Usage(stderr, $"{string.Join(" and ", new[] { (quick, "--quick"), (full, "--full"), (smoke, "--smoke") }.Where(m => m.Item1).Select(m => m.Item2))} cannot be given together.");
        }
        if (!TryReadThreads(parse, options.Threads, stderr, out var threadCounts, out int usage)) return usage;
        var settings = full ? RunSettings.Full(threadCounts) : smoke ? RunSettings.Smoke(threadCounts) : RunSettings.Quick(threadCounts);
        if (parse.GetValue(options.Launches) is { } launchCount)
        {
            if (launchCount is < 1 or > 100) return Usage(stderr, $"--launches expects a whole number from 1 to 100; {launchCount} is not one.");
            settings = settings with { Launches = launchCount, LaunchesGiven = true };
        }

        var experiments = new List<Experiment>();
        var all = ExperimentRegistry.All();
        foreach (string name in requested)
        {
            var found = all.FirstOrDefault(e => string.Equals(e.Name, name, StringComparison.OrdinalIgnoreCase));
            if (found is null)
            {
                return Usage(stderr, $"unknown experiment '{name}'; known: {string.Join(", ", all.Select(e => e.Name))}.");
            }
            if (!experiments.Contains(found)) experiments.Add(found);
        }
        if (experiments.Count == 0) experiments.AddRange(all);

        string outDir = parse.GetValue(options.Output)!;
        string? readmePath = parse.GetValue(options.Readme);
        try
        {
            ReportWriter.EnsureWritable(outDir);
        }
        catch (IOException e)
        {
            return Usage(stderr, e.Message);
        }
        if (readmePath is not null && !File.Exists(readmePath))
        {
            return Usage(stderr, $"--readme '{readmePath}' does not exist.");
        }

        bool printJson = parse.GetValue(options.Json);
        var tables = ConsoleOn(printJson ? stderr : stdout);
        using var cancel = new CancellationTokenSource();
        ConsoleCancelEventHandler onCancel = (_, e) => { e.Cancel = true; cancel.Cancel(); };
        Console.CancelKeyPress += onCancel;
        LabReport report;
        try
        {
            report = TerminalProgress.Run(ConsoleOn(stderr), progress => ExperimentRunner.RunAll(experiments, settings, progress, cancel.Token));
        }
        catch (OperationCanceledException)
        {
            stderr.WriteLine("cancelled: no report written.");
            return 130;
        }
        finally
        {
            Console.CancelKeyPress -= onCancel;
        }

        // Runs accumulate: `run NAME…` into the default folder updates those experiments in the report there.
        bool accumulate = requested.Length > 0 && parse.GetResult(options.Output) is null or { Implicit: true };
        if (accumulate)
        {
            if (ReportWriter.TryRead(outDir, out string? problem) is { } existing)
            {
                report = ReportWriter.Merge(existing, report, ExperimentRegistry.Names);
            }
            else if (problem is not null)
            {
                stderr.WriteLine($"note: {problem}");
            }
        }
        var written = ReportWriter.Write(report, outDir);
        TerminalReport.Write(tables, report);
        if (readmePath is not null) ReportWriter.UpdateReadme(readmePath, report);
        if (printJson) stdout.WriteLine(ReportWriter.ToJson(report));
        stderr.WriteLine($"report: {written.HtmlPath}, {written.MarkdownPath}, {written.JsonPath}, {Format.Count(written.ChartPaths.Count, "chart")}");
        return report.Experiments.Any(r => r.Error is not null) ? 1 : 0;
    }

    private static int CompareReports(string beforePath, string afterPath, TextWriter stdout, TextWriter stderr)
    {
        LabReport before, after;
        try
        {
            before = ReportWriter.FromJson(File.ReadAllText(beforePath));
            after = ReportWriter.FromJson(File.ReadAllText(afterPath));
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or System.Text.Json.JsonException or NotSupportedException or ArgumentException)
        {
            return Usage(stderr, $"cannot read the reports to compare: {e.Message}");
        }
        var changes = ReportComparison.Compare(before, after);
        ReportComparison.Write(ConsoleOn(stdout), before, after, changes);
        return 0;
    }

    private static int RunChild(string[] args, TextWriter stdout, TextWriter stderr)
    {
        bool timed = TimingLog.Enabled;
        if (timed) TimingLog.WriteChildMark(stderr, "entry");
        if (!ChildCommand.TryParse(args, out var command, out string? problem)) return Usage(stderr, problem!);
        string experimentName = command!.Experiment, key = command.Key;
        var experiment = ExperimentRegistry.Find(experimentName);
        if (experiment is null) return Usage(stderr, $"unknown experiment '{experimentName}'.");
        // A child is one process: it runs the experiment (or its part) here, never further launches of it. It knows
        // the run's launch count so that work the run divides between launches is divided the same way.
        var context = new ExperimentContext(experiment.Name, command.Settings());
        try
        {
            if (key == Experiment.LaunchKey) experiment.Run(context);
            else experiment.RunChild(key, command.Arguments, context);
        }
        catch (Exception e)
        {
            // The parent reads this last stderr line into its ChildProcessException.
            stderr.WriteLine($"error: {experimentName}/{key} failed: {e.GetType().Name}: {e.Message}");
            return 1;
        }
        if (timed) TimingLog.WriteChildMark(stderr, "result");
        stdout.WriteLine(ChildProcess.FormatResultLine(context.ToChildOutput()));
        if (timed) TimingLog.WriteChildMark(stderr, "written");
        return 0;
    }

    private static int Usage(TextWriter stderr, string message)
    {
        stderr.WriteLine($"error: {message}");
        return UsageError;
    }

    private static IAnsiConsole ConsoleOn(TextWriter writer)
    {
        bool real = ReferenceEquals(writer, Console.Out) || ReferenceEquals(writer, Console.Error);
        bool redirected = !real || (ReferenceEquals(writer, Console.Out) ? Console.IsOutputRedirected : Console.IsErrorRedirected);
        var console = AnsiConsole.Create(new AnsiConsoleSettings
        {
            Out = new AnsiConsoleOutput(writer),
            Ansi = redirected ? AnsiSupport.No : AnsiSupport.Detect,
            ColorSystem = redirected ? ColorSystemSupport.NoColors : ColorSystemSupport.Detect,
            Interactive = redirected ? InteractionSupport.No : InteractionSupport.Detect,
        });
        if (redirected)
        {
            console.Profile.Width = 80; // a log or a pipe has no width: lay out for the narrowest terminal
        }
        return console;
    }
}
