using System.Globalization;
using Manaloc.Lab.Experiments;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Reporting;

/// <summary>
/// The quick run's time budget: every experiment, 3 launches each (2 where it declares so), within five minutes on 2 cores. Every report of a
/// quick run states its time against it, and names the experiments that took far longer than they declare
/// (<see cref="Experiment.QuickSeconds"/>), so a run that outgrows its budget says so, and says where, in the report
/// its figures are read from.
/// </summary>
public static class RunBudget
{
    /// <summary>What a quick run of every experiment may take on 2 cores.</summary>
    public static TimeSpan Quick { get; } = TimeSpan.FromMinutes(5);

    /// <summary>How many times its declared cost an experiment may take before the sentence names it.</summary>
    public const double OverrunFactor = 1.5;

    /// <summary>
    /// One sentence on a quick report's time: its experiments' times added up against <see cref="Quick"/> (or, when it holds
    /// only some of the lab's experiments, how many), then the experiments that took more than <see cref="OverrunFactor"/>
    /// times their declared cost. Null for a report of another mode, whose time no budget bounds.
    /// </summary>
    /// <param name="report">The report, possibly merged from several runs (each experiment's own time counts).</param>
    /// <param name="declaredSeconds">Each experiment's declared quick cost by name: the lab's whole set, whose sum the budget is for.</param>
    public static string? Describe(LabReport report, IReadOnlyDictionary<string, double> declaredSeconds)
    {
        ArgumentNullException.ThrowIfNull(report);
        ArgumentNullException.ThrowIfNull(declaredSeconds);
        if (report.Mode != RunMode.Quick || report.Experiments.Count == 0) return null;
        var taken = TimeSpan.FromSeconds(report.Experiments.Sum(r => r.ElapsedSeconds));
        bool all = declaredSeconds.Keys.All(name => report.Experiments.Any(r => r.Experiment == name));
        string total = TerminalProgress.Clock(taken);
        string budget = TerminalProgress.Clock(Quick);
        string sentence = !all
            ? $"Time: {Format.Count(report.Experiments.Count, "experiment")} of the lab's {declaredSeconds.Count} took {total} (the quick run's budget, {budget}, is for all of them)."
            : taken <= Quick
                ? $"Time: the quick run's experiments took {total} in all, within its budget of {budget} ({TerminalProgress.Clock(Quick - taken)} to spare)."
                : $"Time: the quick run's experiments took {total} in all, over its budget of {budget} by {TerminalProgress.Clock(taken - Quick)}.";
        var overruns = report.Experiments
            .Where(r => declaredSeconds.TryGetValue(r.Experiment, out double declared) && r.ElapsedSeconds > OverrunFactor * declared)
            .Select(r => $"{r.Experiment} {Seconds(r.ElapsedSeconds)} (declares {Seconds(declaredSeconds[r.Experiment])})")
            .ToArray();
        return overruns.Length == 0 ? sentence
            : $"{sentence} More than {OverrunFactor.ToString(CultureInfo.InvariantCulture)} times their declared cost: {string.Join(", ", overruns)}.";
    }

    /// <summary><see cref="Describe(LabReport, IReadOnlyDictionary{string, double})"/> against the lab's registered experiments.</summary>
    public static string? Describe(LabReport report)
        => Describe(report, ExperimentRegistry.All().ToDictionary(e => e.Name, e => e.QuickSeconds, StringComparer.Ordinal));

    private static string Seconds(double seconds) => $"{seconds.ToString("0", CultureInfo.InvariantCulture)} s";
}
