namespace Manaloc.Lab.Harness;

/// <summary>Everything one experiment produced in one run.</summary>
public sealed record ExperimentResult
{
    /// <summary>Experiment name, e.g. <c>clock-allocations</c>.</summary>
    public required string Experiment { get; init; }
    /// <summary>The article (and seed file) the experiment reproduces.</summary>
    public required string Article { get; init; }
    /// <summary>One line on what is measured.</summary>
    public required string Description { get; init; }
    /// <summary>The article's published figure, where it gives one.</summary>
    public ArticleFigure? ArticleFigure { get; init; }
    /// <summary>The variant every ratio is taken against.</summary>
    public required string Baseline { get; init; }
    /// <summary>Declared variants in display order.</summary>
    public IReadOnlyList<string> Variants { get; init; } = [];
    /// <summary>Declared parameters and the values this run used.</summary>
    public IReadOnlyList<ParameterSpec> Parameters { get; init; } = [];
    /// <summary>The parameter charted on the x axis, if the experiment sweeps one.</summary>
    public string? SweepParameter { get; init; }
    /// <summary>All measurements, ratios to baseline filled in.</summary>
    public IReadOnlyList<Measurement> Measurements { get; init; } = [];
    /// <summary>What the run means for choosing a Manaloc path (<see cref="Experiment.Headline"/>); null when the experiment declares none.</summary>
    public HeadlineResult? Headline { get; init; }
    /// <summary>Verdict on the article's claim, with today's figure.</summary>
    public required VerdictResult Verdict { get; init; }
    /// <summary>Observations worth a line in the report.</summary>
    public IReadOnlyList<string> Notes { get; init; } = [];
    /// <summary>Extra tables (e.g. a layout, a configuration) for the report.</summary>
    public IReadOnlyList<ResultTable> Tables { get; init; } = [];
    /// <summary>Set when the experiment failed; its measurements may be partial.</summary>
    public string? Error { get; init; }
    /// <summary>Launches (processes) the measurements came from; 1 when the experiment ran in the lab's own process.</summary>
    public int Launches { get; init; } = 1;
    /// <summary>Wall-clock seconds the experiment took.</summary>
    public double ElapsedSeconds { get; init; }
    /// <summary>When this experiment ran (a report that accumulates runs holds results of different times).</summary>
    public DateTimeOffset RunAt { get; init; }
    /// <summary>The mode this experiment ran in.</summary>
    public RunMode Mode { get; init; } = RunMode.Quick;
}

/// <summary>A declared parameter: its name, meaning and the values used.</summary>
/// <param name="Name">Name as it appears in <see cref="Measurement.Parameters"/>.</param>
/// <param name="Description">What it controls.</param>
/// <param name="Values">The values this run used.</param>
public sealed record ParameterSpec(string Name, string Description, IReadOnlyList<string> Values);

/// <summary>A small table of text for the report.</summary>
/// <param name="Title">Caption.</param>
/// <param name="Columns">Column headers.</param>
/// <param name="Rows">Cells, row by row.</param>
public sealed record ResultTable(string Title, IReadOnlyList<string> Columns, IReadOnlyList<IReadOnlyList<string>> Rows);

/// <summary>The whole run: machine, settings and every experiment's result. The root of results.json.</summary>
public sealed record LabReport
{
    /// <summary>Version of this schema (docs/results-schema.md).</summary>
    public int SchemaVersion { get; init; } = CurrentSchemaVersion;
    /// <summary>The schema version this build writes.</summary>
    public const int CurrentSchemaVersion = 1;
    /// <summary>When the run started.</summary>
    public DateTimeOffset StartedAt { get; init; }
    /// <summary>The mode of the run that started this report.</summary>
    public required RunMode Mode { get; init; }
    /// <summary>The machine and runtime the figures come from.</summary>
    public required MachineInfo Machine { get; init; }
    /// <summary>One result per experiment, in run order.</summary>
    public IReadOnlyList<ExperimentResult> Experiments { get; init; } = [];
}
