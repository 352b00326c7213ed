namespace Manaloc.Lab.Harness;

/// <summary>
/// An experiment's measurements as its metrics read them. The harness evaluates every metric once on
/// the figures as measured (the point estimate) and once per bootstrap replicate, in which each
/// measurement's sampled statistics (median, percentiles) are those of its samples drawn again with
/// replacement. A metric written against this view therefore gets its confidence interval for free.
/// </summary>
/// <remarks>
/// Figures that are not sampled (allocated bytes, counts, a child's values) are the same in every
/// replicate. Within one replicate each measurement is resampled once, so two metrics reading the
/// same measurement see the same draw.
/// </remarks>
public sealed class Figures
{
    private readonly Random? _random;
    private readonly Dictionary<Measurement, double[]> _draws = new(ReferenceEqualityComparer.Instance);

    /// <summary>The measured figures (<paramref name="random"/> null) or one bootstrap replicate of them.</summary>
    internal Figures(IReadOnlyList<Measurement> all, Random? random)
    {
        All = all;
        _random = random;
    }

    /// <summary>Every measurement of the run, ratios to the baseline filled in.</summary>
    public IReadOnlyList<Measurement> All { get; }

    /// <summary>True in a bootstrap replicate, false for the point estimate.</summary>
    public bool IsReplicate => _random is not null;

    /// <summary>The first measurement of <paramref name="variant"/> that satisfies <paramref name="where"/>.</summary>
    public Measurement? Find(string variant, Func<Measurement, bool>? where = null)
        => All.FirstOrDefault(m => m.Variant == variant && (where?.Invoke(m) ?? true));

    /// <summary>The median of <paramref name="m"/>'s samples (resampled in a replicate).</summary>
    public double Median(Measurement m) => Statistics.MedianOfSorted(Draw(m));

    /// <summary>The median of the first matching measurement, or null when there is none.</summary>
    public double? Median(string variant, Func<Measurement, bool>? where = null)
        => Find(variant, where) is { } m ? Median(m) : null;

    /// <summary>
    /// A nearest-rank percentile of <paramref name="m"/>'s samples (resampled in a replicate); null when
    /// there are too few samples for it (p99 needs <see cref="Statistics.MinForP99"/>, p90 <see cref="Statistics.MinForP90"/>).
    /// </summary>
    public double? Percentile(Measurement m, double fraction)
    {
        int needed = fraction is >= 0.99 or <= 0.01 ? Statistics.MinForP99 : fraction is >= 0.9 or <= 0.1 ? Statistics.MinForP90 : 1;
        var draw = Draw(m);
        return draw.Length >= needed ? Statistics.Percentile(draw, fraction) : null;
    }

    /// <summary>
    /// How many times better <paramref name="candidate"/> is than <paramref name="baseline"/> by median:
    /// baseline ÷ candidate when lower is better (time, bytes), candidate ÷ baseline otherwise.
    /// Null when either is missing or a median is not positive.
    /// </summary>
    public double? TimesBetter(string candidate, string baseline, Func<Measurement, bool>? where = null)
        => Find(candidate, where) is { } c && Find(baseline, where) is { } b ? TimesBetter(c, b) : null;

    /// <summary>How many times better <paramref name="candidate"/> is than <paramref name="baseline"/> by median.</summary>
    public double? TimesBetter(Measurement candidate, Measurement baseline)
    {
        ArgumentNullException.ThrowIfNull(candidate);
        ArgumentNullException.ThrowIfNull(baseline);
        double c = Median(candidate), b = Median(baseline);
        if (c <= 0 || b <= 0) return null;
        return candidate.LowerIsBetter ? b / c : c / b;
    }

    /// <summary>A figure of the first matching measurement that is not sampled (bytes per op, a metric); the same in every replicate.</summary>
    public double? Value(string variant, Func<Measurement, double?> pick, Func<Measurement, bool>? where = null)
    {
        ArgumentNullException.ThrowIfNull(pick);
        return Find(variant, where) is { } m ? pick(m) : null;
    }

    /// <summary>Geometric mean of the values that are present and positive; null when none is.</summary>
    public static double? GeometricMean(IEnumerable<double?> values)
    {
        ArgumentNullException.ThrowIfNull(values);
        double sum = 0;
        int n = 0;
        foreach (var v in values)
        {
            if (v is not { } x || !(x > 0) || !double.IsFinite(x)) continue;
            sum += Math.Log(x);
            n++;
        }
        return n == 0 ? null : Math.Exp(sum / n);
    }

    /// <summary>The measurement's samples, sorted: as measured, or drawn again with replacement (once per replicate).</summary>
    private double[] Draw(Measurement m)
    {
        ArgumentNullException.ThrowIfNull(m);
        if (_draws.TryGetValue(m, out var cached)) return cached;
        var samples = m.Statistics.Samples;
        double[] draw;
        if (samples.Count == 0)
        {
            draw = [m.Statistics.Median];
        }
        else if (_random is null)
        {
            draw = samples.ToArray();
        }
        else
        {
            draw = new double[samples.Count];
            for (int i = 0; i < draw.Length; i++) draw[i] = samples[_random.Next(samples.Count)];
        }
        Array.Sort(draw);
        _draws[m] = draw;
        return draw;
    }
}
