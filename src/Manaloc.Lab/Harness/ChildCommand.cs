using System.Globalization;

namespace Manaloc.Lab.Harness;

/// <summary>
/// The lab's child command line, written by the parent and read by the child in one place:
/// <c>child &lt;experiment&gt; &lt;key&gt; [--mode smoke|quick|full] [--launches N] [--threads 1,2,4] [-- arguments…]</c>.
/// </summary>
/// <remarks>
/// A quick run starts well over a hundred children (every launch, and the children of gc-modes, live-set, server, http …),
/// each of which reads only this line. The lab's command-line parser, built and jitted for the user's commands, cost a
/// child more start-up than the line's few tokens need, so a child reads them here and never builds that parser.
/// </remarks>
/// <param name="Experiment">The experiment's name.</param>
/// <param name="Key">What to run: <see cref="Harness.Experiment.LaunchKey"/> or one of the experiment's own parts.</param>
/// <param name="Mode">The run's mode.</param>
/// <param name="Launches">The run's launch count, when given (work divided between launches is divided the same way).</param>
/// <param name="Threads">The run's thread counts, when given.</param>
/// <param name="Arguments">What follows <c>--</c> (and any further positional token): the part's own arguments.</param>
public sealed record ChildCommand(string Experiment, string Key, RunMode Mode, int? Launches, IReadOnlyList<int>? Threads, IReadOnlyList<string> Arguments)
{
    /// <summary>The first token of every child command line.</summary>
    public const string Verb = "child";

    /// <summary>The command line that <see cref="TryParse"/> reads back, <see cref="Verb"/> first.</summary>
    public IReadOnlyList<string> ToArguments()
    {
        var args = new List<string> { Verb, Experiment, Key, "--mode", RunSettings.NameOf(Mode) };
        if (Launches is { } launches) args.AddRange(["--launches", launches.ToString(CultureInfo.InvariantCulture)]);
        if (Threads is { Count: > 0 } threads) args.AddRange(["--threads", string.Join(',', threads)]);
        args.Add("--");
        args.AddRange(Arguments);
        return args;
    }

    /// <summary>
    /// Reads a child command line (<paramref name="args"/> after <see cref="Verb"/>). Options may come anywhere before
    /// <c>--</c>; everything after it is an argument, as is any positional token after the key.
    /// </summary>
    /// <param name="args">The tokens after <see cref="Verb"/>.</param>
    /// <param name="command">The command, when the line is well formed.</param>
    /// <param name="error">What is wrong with the line, naming the token, when it is not.</param>
    public static bool TryParse(IReadOnlyList<string> args, out ChildCommand? command, out string? error)
    {
        ArgumentNullException.ThrowIfNull(args);
        command = null;
        var positional = new List<string>();
        RunMode mode = RunMode.Quick;
        int? launches = null;
        IReadOnlyList<int>? threads = null;
        for (int i = 0; i < args.Count; i++)
        {
            string token = args[i];
            if (token == "--")
            {
                positional.AddRange(args.Skip(i + 1));
                break;
            }
            if (!token.StartsWith("--", StringComparison.Ordinal))
            {
                positional.Add(token);
                continue;
            }
            if (i + 1 >= args.Count)
            {
                error = $"{token} expects a value.";
                return false;
            }
            string value = args[++i];
            switch (token)
            {
                case "--mode":
                    if (!Enum.TryParse(value, ignoreCase: true, out mode) || !Enum.IsDefined(mode) || int.TryParse(value, out _))
                    {
                        error = $"--mode expects smoke, quick or full; '{value}' is not one.";
                        return false;
                    }
                    break;
                case "--launches":
                    if (!int.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out int count) || count is < 1 or > 100)
                    {
                        error = $"--launches expects a whole number from 1 to 100; '{value}' is not one.";
                        return false;
                    }
                    launches = count;
                    break;
                case "--threads":
                    try
                    {
                        threads = RunSettings.ParseThreadCounts(value);
                    }
                    catch (FormatException e)
                    {
                        error = e.Message;
                        return false;
                    }
                    break;
                default:
                    error = $"unknown option '{token}' for a child (known: --mode, --launches, --threads).";
                    return false;
            }
        }
        if (positional.Count < 2)
        {
            error = "a child needs an experiment and a key: child <experiment> <key> [--mode M] [--launches N] [--threads T] [-- arguments].";
            return false;
        }
        command = new ChildCommand(positional[0], positional[1], mode, launches, threads, positional.Skip(2).ToArray());
        error = null;
        return true;
    }

    /// <summary>The settings the child runs with: the mode's, with the run's thread counts and launch count, and the launch's index.</summary>
    public RunSettings Settings()
    {
        var settings = RunSettings.For(Mode, Threads);
        if (Launches is { } launches) settings = settings with { Launches = launches };
        // A launch's one argument is its index (see ExperimentContext.RunLaunch).
        if (Key == Harness.Experiment.LaunchKey && Arguments.Count > 0
            && int.TryParse(Arguments[0], NumberStyles.None, CultureInfo.InvariantCulture, out int launch))
        {
            settings = settings with { Launch = launch };
        }
        return settings;
    }
}
