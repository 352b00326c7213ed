namespace Manaloc.Lab.Harness;

/// <summary>
/// One experiment from the articles. It declares what it reproduces (<see cref="Claim"/>: the
/// article's words, figure and today's metric), its variants and parameters and the project's own
/// <see cref="Targets"/>, and records measurements in <see cref="Run"/>; the harness owns the rest:
/// calibration, sampling, interleaving, statistics, the verdict rule (<see cref="VerdictRule"/>), the
/// verdict sentence, units and formatting. One subclass per file in Experiments/, registered once in
/// <c>ExperimentRegistry</c>. How to write one: docs/lab.md.
/// </summary>
/// <remarks>
/// An experiment measures through its <see cref="ExperimentContext"/> only, and declares its verdict's
/// inputs (<see cref="Claim"/>, <see cref="Targets"/>); it cannot write a verdict itself. In quick mode an
/// experiment must finish in a few seconds on 2 cores per launch (see <see cref="RunSettings.Launches"/>).
/// </remarks>
public abstract class Experiment
{
    /// <summary>Lower-case, dash-separated name, e.g. <c>clock-allocations</c>; the file is named after it.</summary>
    public abstract string Name { get; }

    /// <summary>The article and seed file, e.g. <c>DateTime.Now in v4.0 Causes Dynamic Memory Allocations (seed 000)</c>.</summary>
    public abstract string Article { get; }

    /// <summary>One line on what is measured.</summary>
    public abstract string Description { get; }

    /// <summary>The article's claim: its words and figure, and the metric that gives today's counterpart. Null: nothing to compare.</summary>
    public virtual Claim? Claim => null;

    /// <summary>
    /// What the experiment means for a user choosing a Manaloc path: the recommended path's figure against the
    /// alternative the user has, with figures beside it (the weakest path's). Every registered experiment declares
    /// one; it is shown before the <see cref="Claim"/>'s verdict, which it never replaces.
    /// </summary>
    public virtual Headline? Headline => null;

    /// <summary>The project's own speed and memory targets for this experiment (from its issues).</summary>
    public virtual IReadOnlyList<Target> Targets => [];

    /// <summary>The article's published figure: the <see cref="Claim"/>'s.</summary>
    public ArticleFigure? Figure => Claim?.Figure;

    /// <summary>
    /// About how many seconds a quick run of this experiment takes on a 2-core machine: the shape of the
    /// progress estimate (see <see cref="ExpectedSeconds"/>). The run's own pace corrects the scale, so a
    /// rounded figure from one quick run is enough.
    /// </summary>
    public virtual double QuickSeconds => 10;

    /// <summary>Full mode's warm-up and samples (1 s, 10 × 100 ms) against quick mode's (50 ms in a launch, 8 × 8 ms) per measurement, roughly.</summary>
    public const double FullModeFactor = 8;

    /// <summary>The declared cost under <paramref name="settings"/>: <see cref="QuickSeconds"/>, times <see cref="FullModeFactor"/> in full mode, a tenth in smoke mode.</summary>
    public virtual double ExpectedSeconds(RunSettings settings)
    {
        ArgumentNullException.ThrowIfNull(settings);
        return settings.Pick(QuickSeconds / 10, QuickSeconds, QuickSeconds * FullModeFactor);
    }

    /// <summary>Variants in display order, the baseline among them.</summary>
    public abstract IReadOnlyList<string> Variants { get; }

    /// <summary>The variant ratios are taken against.</summary>
    public abstract string Baseline { get; }

    /// <summary>The parameter charted on the x axis when the experiment sweeps one (usually <c>threads</c>).</summary>
    public virtual string? SweepParameter => null;

    /// <summary>Parameters and the values a run with <paramref name="settings"/> uses.</summary>
    public virtual IReadOnlyList<ParameterSpec> DescribeParameters(RunSettings settings) => [];

    /// <summary>Runs every variant, recording through <paramref name="context"/>.</summary>
    public abstract void Run(ExperimentContext context);

    /// <summary>
    /// The verdict on the article's claim and the targets, from the measurements (ratios already filled
    /// in): the harness's <see cref="Judgement"/> of <see cref="Claim"/> and <see cref="Targets"/>.
    /// </summary>
    public VerdictResult Judge(IReadOnlyList<Measurement> measurements)
        => Judgement.Judge(Claim, Targets, measurements, Judgement.SeedOf(Name));

    /// <summary>
    /// Environment variables each launch of this experiment runs with, besides the lab's (null removes one). An
    /// experiment that measures a cold start overrides the lab's tiering setting
    /// (<see cref="ChildProcess.CallCountingDelayVariable"/>) back to the runtime's default, which an application has.
    /// </summary>
    public virtual IReadOnlyDictionary<string, string?>? LaunchEnvironment => null;

    /// <summary>The child key that runs the whole experiment as one launch (<see cref="ExperimentContext.RunLaunch"/>); no experiment's own part may use it.</summary>
    public const string LaunchKey = "launch";

    /// <summary>Runs the part of the experiment that must live in a child process (see <see cref="ExperimentContext.RunChild"/>).</summary>
    /// <param name="key">Which part, as passed by the parent.</param>
    /// <param name="arguments">Further arguments from the parent.</param>
    /// <param name="context">Records what goes back to the parent.</param>
    public virtual void RunChild(string key, IReadOnlyList<string> arguments, ExperimentContext context)
        => throw new NotSupportedException($"Experiment '{Name}' has no child part '{key}'.");
}
