namespace Manaloc.Lab.Harness;

/// <summary>
/// One experiment from the articles: what it reproduces, its variants and parameters, how it runs
/// and how its verdict on the article's claim is stated. One subclass per file in Experiments/,
/// registered once in <c>ExperimentRegistry</c>.
/// </summary>
/// <remarks>
/// An experiment measures through its <see cref="ExperimentContext"/> only; the runner fills in
/// ratios to the baseline and asks <see cref="Judge"/> for the verdict. In quick mode an
/// experiment must finish in a few seconds on 2 cores (the whole suite runs in under 3 minutes).
/// </remarks>
public abstract class Experiment
{
    /// <summary>Lower-case, dash-separated name, e.g. <c>clock-allocations</c>; the file is named after it.</summary>
    public abstract string Name { get; }

    /// <summary>The article and seed file, e.g. <c>DateTime.Now in v4.0 Causes Dynamic Memory Allocations (seed 000)</c>.</summary>
    public abstract string Article { get; }

    /// <summary>One line on what is measured.</summary>
    public abstract string Description { get; }

    /// <summary>The article's published figure, where it gives one.</summary>
    public virtual ArticleFigure? Figure => null;

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

    /// <summary>States the verdict on the article's claim from the measurements (ratios already filled in).</summary>
    public virtual VerdictResult Judge(IReadOnlyList<Measurement> measurements)
        => new(Verdict.NotComparable, "The article gives no figure to compare with.");

    /// <summary>Runs the part of the experiment that must live in a child process (see <see cref="ExperimentContext.RunChild"/>).</summary>
    /// <param name="key">Which part, as passed by the parent.</param>
    /// <param name="arguments">Further arguments from the parent.</param>
    /// <param name="context">Records what goes back to the parent.</param>
    public virtual void RunChild(string key, IReadOnlyList<string> arguments, ExperimentContext context)
        => throw new NotSupportedException($"Experiment '{Name}' has no child part '{key}'.");

    /// <summary>
    /// The verdict for a "candidate beats baseline by the article's ratio" claim, comparing the
    /// medians of the two variants' measurements that satisfy <paramref name="where"/>.
    /// </summary>
    protected VerdictResult JudgeRatio(
        IReadOnlyList<Measurement> measurements, string baseline, string candidate, Func<Measurement, bool>? where = null, string what = "faster")
    {
        var b = measurements.FirstOrDefault(m => m.Variant == baseline && (where?.Invoke(m) ?? true));
        var c = measurements.FirstOrDefault(m => m.Variant == candidate && (where?.Invoke(m) ?? true));
        if (b is null || c is null || Figure?.Value is not double published)
        {
            return new(Verdict.NotComparable, $"No measurement of both {baseline} and {candidate}, or no published ratio.");
        }
        double today = b.LowerIsBetter ? b.Statistics.Median / c.Statistics.Median : c.Statistics.Median / b.Statistics.Median;
        var verdict = VerdictResult.FromRatios(published, today);
        string text = $"{candidate} {Format.Ratio(today)} {what} than {baseline} today ({Format.Value(b.Statistics.Median, b.Unit)} → {Format.Value(c.Statistics.Median, c.Unit)}); article: {Format.Ratio(published)}";
        return new(verdict, text, today, "x");
    }
}
