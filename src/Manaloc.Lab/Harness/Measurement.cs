namespace Manaloc.Lab.Harness;

/// <summary>
/// One variant measured under one set of parameters: the record that crosses every boundary of
/// the lab (harness → experiment → reporters → JSON). Nothing is parsed back from text.
/// </summary>
public sealed record Measurement
{
    /// <summary>The variant measured, e.g. <c>EconomicResetEvent</c>.</summary>
    public required string Variant { get; init; }

    /// <summary>Parameter values for this measurement (e.g. <c>threads</c> = 2, <c>size</c> = 4096), typed.</summary>
    public Parameters Parameters { get; init; } = Parameters.None;

    /// <summary>Threads that ran the body.</summary>
    public int Threads { get; init; } = 1;

    /// <summary>Unit of <see cref="Statistics"/>: <c>ns/op</c>, <c>ops/s</c>, <c>ms</c>, <c>bytes</c>, …</summary>
    public required Unit Unit { get; init; }

    /// <summary>True when a smaller value of the primary metric is better (time, bytes).</summary>
    public bool LowerIsBetter { get; init; } = true;

    /// <summary>Statistics of the primary metric over the samples.</summary>
    public required Statistics Statistics { get; init; }

    /// <summary>Operations in each sample (0 when not an operation count).</summary>
    public long OperationsPerSample { get; init; }

    /// <summary>Median nanoseconds per operation, where operations were timed.</summary>
    public double? NsPerOp { get; init; }

    /// <summary>Median operations per second (all threads together), where operations were timed.</summary>
    public double? OpsPerSecond { get; init; }

    /// <summary>Managed bytes allocated per operation over all measured samples.</summary>
    public double? AllocatedBytesPerOp { get; init; }

    /// <summary>Managed bytes allocated over all measured samples.</summary>
    public long AllocatedBytes { get; init; }

    /// <summary>Garbage collections during the measured samples.</summary>
    public GcCounts Gc { get; init; } = new();

    /// <summary>Total GC pause time during the measured samples, in milliseconds.</summary>
    public double GcPauseMs { get; init; }

    /// <summary><c>Monitor.LockContentionCount</c> increase during the measured samples.</summary>
    public long LockContentions { get; init; }

    /// <summary>The process's peak working set after the measurement, in bytes.</summary>
    public long PeakWorkingSetBytes { get; init; }

    /// <summary>Median of this measurement divided by the baseline's median (same parameters, same unit).</summary>
    public double? RatioToBaseline { get; init; }

    /// <summary>Low end of the 95% bootstrap confidence interval of <see cref="RatioToBaseline"/>.</summary>
    public double? RatioLow { get; init; }

    /// <summary>High end of the 95% bootstrap confidence interval of <see cref="RatioToBaseline"/>.</summary>
    public double? RatioHigh { get; init; }

    /// <summary>Where the threads ran during the measured samples (two or more threads, Linux); null when not recorded.</summary>
    public Placement? Placement { get; init; }

    /// <summary>
    /// The launches (processes) the samples came from, in order: <see cref="Statistics"/> pools their samples,
    /// launch by launch, and the bootstrap resamples launches before samples. Empty for a measurement taken in
    /// this process alone (one launch).
    /// </summary>
    public IReadOnlyList<LaunchFigures> Launches { get; init; } = [];

    /// <summary>
    /// The interleaved rounds this measurement was sampled in, shared with the other measurements sampled in the same
    /// rounds (<see cref="Rounds.Interleave"/>): a random 64-bit id, so groups of different processes (launches, the
    /// children of one launch) do not meet; null when not sampled in rounds. The
    /// bootstrap draws such a group's rounds once for all its measurements (<see cref="Figures"/>). A measurement merged
    /// from launches keeps each launch's own group in <see cref="LaunchFigures.RoundGroup"/>.
    /// </summary>
    public long? RoundGroup { get; init; }

    /// <summary>
    /// Each sample's round (from 0 within its launch), in the order of <see cref="Statistics"/>' samples; empty when the
    /// measurement was not sampled in rounds.
    /// </summary>
    public IReadOnlyList<int> SampleRounds { get; init; } = [];

    /// <summary>Further named figures (e.g. <c>received</c>, <c>gcTimePercent</c>).</summary>
    public IReadOnlyDictionary<string, double> Metrics { get; init; } = new Dictionary<string, double>();

    /// <summary>The parameters as a stable <c>k=v, k=v</c> key (sorted by name).</summary>
    [System.Text.Json.Serialization.JsonIgnore]
    public string ParameterKey => Parameters.Key;

    /// <summary>Formats parameters as <c>k=v, k=v</c>, sorted by name (<see cref="Harness.Parameters.Key"/>).</summary>
    public static string FormatParameters(Parameters parameters)
    {
        ArgumentNullException.ThrowIfNull(parameters);
        return parameters.Key;
    }
}

/// <summary>Collections per generation.</summary>
public sealed record GcCounts
{
    /// <summary>Generation 0 collections.</summary>
    public int Gen0 { get; init; }
    /// <summary>Generation 1 collections.</summary>
    public int Gen1 { get; init; }
    /// <summary>Generation 2 collections.</summary>
    public int Gen2 { get; init; }
}
