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
        var names = new Argument<string[]>("names") { Description = "Experiments to run (default: all). See 'list'.", Arity = ArgumentArity.ZeroOrMore };
        var quick = new Option<bool>("--quick") { Description = "Short warm-up and few samples: every experiment in seconds (the default)." };
        var full = new Option<bool>("--full") { Description = "Longer warm-up, more and longer samples, larger sizes." };
        var threads = new Option<string?>("--threads") { Description = "Thread counts for sweeps, e.g. 1,2,4 (default: 1, powers of two, processors, 2x processors)." };
        var output = new Option<string>("--out") { Description = "Folder for results.json, report.md and charts/.", DefaultValueFactory = _ => Path.Combine("artifacts", "lab") };
        var json = new Option<bool>("--json") { Description = "Also print results.json to stdout (tables then go to stderr)." };
        var readme = new Option<string?>("--readme") { Description = "Also rewrite the results block of this README.md." };

        var run = new Command("run", "Run experiments and write the report.");
        run.Arguments.Add(names);
        foreach (var option in new Option[] { quick, full, threads, output, json, readme }) run.Options.Add(option);

        var list = new Command("list", "List the experiments: name, article, description.");

        var childExperiment = new Argument<string>("experiment");
        var childKey = new Argument<string>("key");
        var childArgs = new Argument<string[]>("arguments") { Arity = ArgumentArity.ZeroOrMore };
        var childMode = new Option<string>("--mode") { DefaultValueFactory = _ => "quick" };
        var child = new Command("child", "Internal: run part of an experiment in this process and print its result line.") { Hidden = true };
        child.Arguments.Add(childExperiment);
        child.Arguments.Add(childKey);
        child.Arguments.Add(childArgs);
        child.Options.Add(childMode);
        child.Options.Add(threads);

        var root = new RootCommand("Manaloc lab: reruns the articles' experiments on this machine and sets their figures beside today's.");
        foreach (var option in new Option[] { quick, full, threads, output, json, readme }) root.Options.Add(option);
        root.Subcommands.Add(run);
        root.Subcommands.Add(list);
        root.Subcommands.Add(child);

        var parse = root.Parse(args);
        if (parse.Errors.Count > 0)
        {
            stderr.WriteLine($"error: {parse.Errors[0].Message}");
            return UsageError;
        }
        var command = parse.CommandResult.Command;
        if (command == list)
        {
            TerminalReport.WriteList(ConsoleOn(stdout), ExperimentRegistry.All());
            return 0;
        }
        if (command != run && command != root && command != child)
        {
            // --help, --version and the like.
            return parse.Invoke(new InvocationConfiguration { Output = stdout, Error = stderr });
        }

        if (parse.GetValue(quick) && parse.GetValue(full))
        {
            return Usage(stderr, "--quick and --full cannot both be given.");
        }
        IReadOnlyList<int>? threadCounts = null;
        if (parse.GetValue(threads) is { } threadText)
        {
            try { threadCounts = RunSettings.ParseThreadCounts(threadText); }
            catch (FormatException e) { return Usage(stderr, e.Message); }
        }
        var settings = parse.GetValue(full) ? RunSettings.Full(threadCounts) : RunSettings.Quick(threadCounts);

        if (command == child)
        {
            settings = parse.GetValue(childMode) switch
            {
                "smoke" => RunSettings.Smoke(threadCounts),
                "full" => RunSettings.Full(threadCounts),
                _ => RunSettings.Quick(threadCounts),
            };
            return RunChild(parse.GetValue(childExperiment)!, parse.GetValue(childKey)!, parse.GetValue(childArgs) ?? [], settings, stdout, stderr);
        }

        string[] requested = command == run ? parse.GetValue(names) ?? [] : [];
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

        string outDir = parse.GetValue(output)!;
        string? readmePath = parse.GetValue(readme);
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

        bool printJson = parse.GetValue(json);
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

        var written = ReportWriter.Write(report, outDir);
        TerminalReport.Write(tables, report);
        if (readmePath is not null) ReportWriter.UpdateReadme(readmePath, report);
        if (printJson) stdout.WriteLine(ReportWriter.ToJson(report));
        stderr.WriteLine($"report: {written.MarkdownPath}, {written.JsonPath}, {written.ChartPaths.Count} chart(s)");
        return report.Experiments.Any(r => r.Error is not null) ? 1 : 0;
    }

    private static int RunChild(string experimentName, string key, string[] arguments, RunSettings settings, TextWriter stdout, TextWriter stderr)
    {
        var experiment = ExperimentRegistry.Find(experimentName);
        if (experiment is null) return Usage(stderr, $"unknown experiment '{experimentName}'.");
        var context = new ExperimentContext(experiment.Name, settings);
        try
        {
            experiment.RunChild(key, arguments, context);
        }
        catch (Exception e)
        {
            // The parent reads this last stderr line into its ChildProcessException.
            stderr.WriteLine($"error: {experimentName}/{key} failed: {e.GetType().Name}: {e.Message}");
            return 1;
        }
        stdout.WriteLine(ChildProcess.FormatResultLine(context.ToChildOutput()));
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
            console.Profile.Width = 160; // a log or a pipe has no width; don't wrap tables at 80
        }
        return console;
    }
}
