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
    private readonly string? _name, _article, _description, _baseline, _sweepParameter;
    private readonly IReadOnlyList<string>? _variants;
    private readonly double? _quickSeconds;
    private readonly int? _quickLaunches;

    /// <summary>
    /// Declares the experiment in one place: what it is, its variants and what a quick run costs. The members
    /// below return these; an experiment overrides only what it computes (its <see cref="Claim"/>, its
    /// <see cref="Targets"/>, its parameters).
    /// </summary>
    /// <param name="name">See <see cref="Name"/>.</param>
    /// <param name="article">See <see cref="Article"/>.</param>
    /// <param name="description">See <see cref="Description"/>.</param>
    /// <param name="variants">See <see cref="Variants"/>.</param>
    /// <param name="baseline">See <see cref="Baseline"/>; one of <paramref name="variants"/>.</param>
    /// <param name="quickSeconds">See <see cref="QuickSeconds"/>.</param>
    /// <param name="sweepParameter">See <see cref="SweepParameter"/>.</param>
    /// <param name="quickLaunches">See <see cref="QuickLaunches"/>; null runs quick mode's launch count.</param>
    /// <exception cref="ArgumentException">A text is empty, there are no variants, or <paramref name="baseline"/> is not among them.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="quickLaunches"/> is below 2: one launch cannot show launches that disagree.</exception>
    protected Experiment(
        string name, string article, string description, IReadOnlyList<string> variants, string baseline,
        double quickSeconds, string? sweepParameter = null, int? quickLaunches = null)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        ArgumentException.ThrowIfNullOrWhiteSpace(article);
        ArgumentException.ThrowIfNullOrWhiteSpace(description);
        ArgumentNullException.ThrowIfNull(variants);
        if (variants.Count == 0) throw new ArgumentException($"Experiment '{name}' declares no variants.", nameof(variants));
        if (!variants.Contains(baseline)) throw new ArgumentException($"Experiment '{name}': the baseline '{baseline}' is not one of its variants.", nameof(baseline));
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(quickSeconds);
        if (quickLaunches is { } launches) ArgumentOutOfRangeException.ThrowIfLessThan(launches, 2, nameof(quickLaunches));
        _quickLaunches = quickLaunches;
        (_name, _article, _description, _variants, _baseline, _quickSeconds, _sweepParameter) = (name, article, description, variants, baseline, quickSeconds, sweepParameter);
    }

    /// <summary>For an experiment that computes what it is: it overrides <see cref="Name"/>, <see cref="Article"/>, <see cref="Description"/>, <see cref="Variants"/> and <see cref="Baseline"/>.</summary>
    protected Experiment()
    {
    }

    /// <summary>Lower-case, dash-separated name, e.g. <c>clock-allocations</c>; the file is named after it.</summary>
    public virtual string Name => _name ?? throw Undeclared(nameof(Name));

    /// <summary>The article and seed file, e.g. <c>DateTime.Now in v4.0 Causes Dynamic Memory Allocations (seed 000)</c>.</summary>
    public virtual string Article => _article ?? throw Undeclared(nameof(Article));

    /// <summary>One line on what is measured.</summary>
    public virtual string Description => _description ?? throw Undeclared(nameof(Description));

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
    public virtual double QuickSeconds => _quickSeconds ?? 10;

    /// <summary>
    /// How many launches a quick run of this experiment takes, when fewer than quick mode's (null: quick mode's). An
    /// experiment whose verdict and targets sit far from their lines, and whose launches have never disagreed, may take
    /// 2: two launches still find launches that disagree (the verdict is then unstable), and the hierarchical interval
    /// still spans the launches' own figures; a third launch mostly narrows what one process's luck can do, which only
    /// matters for a figure near its line. Full mode and an explicit <c>--launches</c> run every experiment alike.
    /// </summary>
    public virtual int? QuickLaunches => _quickLaunches;

    /// <summary>
    /// <paramref name="settings"/> as this experiment runs them: in quick mode, unless the command line chose the launch
    /// count (<see cref="RunSettings.LaunchesGiven"/>), at most <see cref="QuickLaunches"/> launches.
    /// </summary>
    public RunSettings SettingsFor(RunSettings settings)
    {
        ArgumentNullException.ThrowIfNull(settings);
        return settings.Mode == RunMode.Quick && !settings.LaunchesGiven && QuickLaunches is { } launches && launches < settings.Launches
            ? settings with { Launches = launches }
            : settings;
    }

    /// <summary>True when the experiment states its <see cref="QuickSeconds"/> (through the constructor or an override) instead of leaving the default.</summary>
    internal bool DeclaresQuickSeconds => _quickSeconds is not null || GetType().GetProperty(nameof(QuickSeconds))!.DeclaringType != typeof(Experiment);

    /// <summary>Full mode's warm-up and samples (1 s, 10 × 100 ms) against quick mode's (50 ms in a launch, 8 × 8 ms) per measurement, roughly.</summary>
    public const double FullModeFactor = 8;

    /// <summary>The declared cost under <paramref name="settings"/>: <see cref="QuickSeconds"/>, times <see cref="FullModeFactor"/> in full mode, a tenth in smoke mode.</summary>
    public virtual double ExpectedSeconds(RunSettings settings)
    {
        ArgumentNullException.ThrowIfNull(settings);
        return settings.Pick(QuickSeconds / 10, QuickSeconds, QuickSeconds * FullModeFactor);
    }

    /// <summary>Variants in display order, the baseline among them.</summary>
    public virtual IReadOnlyList<string> Variants => _variants ?? throw Undeclared(nameof(Variants));

    /// <summary>The variant ratios are taken against.</summary>
    public virtual string Baseline => _baseline ?? throw Undeclared(nameof(Baseline));

    /// <summary>The parameter charted on the x axis when the experiment sweeps one (usually <c>threads</c>).</summary>
    public virtual string? SweepParameter => _sweepParameter;

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

    /// <summary>
    /// True when this experiment's quick launches after the first time nothing: they measure only what another process's
    /// work does not move (a process's own resident memory, say), so the runner starts them side by side once the first
    /// launch, which times, has ended. False (the default): every launch runs alone, one after another.
    /// </summary>
    public virtual bool LaterQuickLaunchesTimeNothing => false;

    /// <summary>The child key that runs the whole experiment as one launch (<see cref="ExperimentContext.RunLaunch"/>); no experiment's own part may use it.</summary>
    public const string LaunchKey = "launch";

    /// <summary>Runs the part of the experiment that must live in a child process (see <see cref="ExperimentContext.RunChild"/>).</summary>
    /// <param name="key">Which part, as passed by the parent.</param>
    /// <param name="arguments">Further arguments from the parent.</param>
    /// <param name="context">Records what goes back to the parent.</param>
    public virtual void RunChild(string key, IReadOnlyList<string> arguments, ExperimentContext context)
        => throw new NotSupportedException($"Experiment '{Name}' has no child part '{key}'.");

    private InvalidOperationException Undeclared(string member)
        => new($"Experiment {GetType().Name} neither declares nor overrides {member}: pass it to the declaring constructor.");
}
