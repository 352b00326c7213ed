namespace Manaloc.Lab.Harness;

/// <summary>
/// An experiment's measurements as its metrics read them. The harness evaluates every metric once on
/// the figures as measured (the point estimate) and once per bootstrap replicate, in which each
/// measurement's sampled statistics (median, percentiles) are those of its samples drawn again with
/// replacement. A metric written against this view therefore gets its confidence interval for free.
/// </summary>
/// <remarks>
/// The bootstrap is hierarchical when the measurements come from several launches (processes,
/// <see cref="Measurement.Launches"/>): a replicate first draws launches with replacement, the same
/// draw for every measurement (one launch measured every variant), then draws samples with replacement
/// within each drawn launch. So a difference between processes widens the interval, which resampling
/// the pooled samples alone would hide. Figures that are not sampled (allocated bytes, counts, a child's
/// values) are the same in every replicate. Within one replicate each measurement is resampled once, so
/// two metrics reading the same measurement see the same draw.
/// </remarks>
public sealed class Figures
{
    private readonly Random? _random;
    private readonly int? _launch;
    private readonly Dictionary<Measurement, double[]> _draws = new(ReferenceEqualityComparer.Instance);
    private readonly Dictionary<int, int[]> _launchDraws = [];
    private readonly HashSet<Measurement> _read = new(ReferenceEqualityComparer.Instance);

    /// <summary>The measured figures (<paramref name="random"/> null) or one bootstrap replicate of them.</summary>
    /// <param name="all">The run's measurements.</param>
    /// <param name="random">Draws a replicate; null for the figures as measured.</param>
    /// <param name="launch">Only this launch's samples (and, in a replicate, only they are resampled); null for all launches.</param>
    internal Figures(IReadOnlyList<Measurement> all, Random? random, int? launch = null)
    {
        All = all;
        _random = random;
        _launch = launch;
    }

    /// <summary>The measurements a metric read so far (to find what its launches shared: counts, placement).</summary>
    internal IReadOnlyCollection<Measurement> Read => _read;

    /// <summary>Thrown when a launch-only view is asked for a measurement that launch did not record.</summary>
    internal sealed class MissingLaunchException : Exception;

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

    /// <summary>
    /// A figure of the first matching measurement that is not sampled (bytes per op, a metric). From several
    /// launches it is the mean of each launch's own figure, and a replicate takes the mean over its draw of
    /// launches, so a figure that differs between processes gets an interval; from one launch it is the same in
    /// every replicate.
    /// </summary>
    public double? Value(string variant, Func<Measurement, double?> pick, Func<Measurement, bool>? where = null)
    {
        ArgumentNullException.ThrowIfNull(pick);
        if (Find(variant, where) is not { } m) return null;
        _read.Add(m);
        if (m.Launches.Count < 2) return _launch is null or 0 || m.Launches.Count == 1 && m.Launches[0].Launch == _launch ? pick(m) : throw new MissingLaunchException();
        var views = Views.GetValue(m, merged => [.. Enumerable.Range(0, merged.Launches.Count).Select(i => Launches.View(merged, i))]);
        if (_launch is { } only)
        {
            int index = m.Launches.Select((l, i) => (l, i)).FirstOrDefault(x => x.l.Launch == only, (null!, -1)).Item2;
            return index < 0 ? throw new MissingLaunchException() : pick(views[index]);
        }
        IEnumerable<int> drawn = _random is null ? Enumerable.Range(0, views.Length) : LaunchDraw(views.Length);
        double sum = 0;
        int n = 0;
        foreach (int i in drawn)
        {
            if (pick(views[i]) is not { } v) continue;
            sum += v;
            n++;
        }
        return n == 0 ? null : sum / n;
    }

    /// <summary>Each merged measurement's per-launch views, made once (the measurements are immutable).</summary>
    private static readonly System.Runtime.CompilerServices.ConditionalWeakTable<Measurement, Measurement[]> Views = new();

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

    /// <summary>
    /// The measurement's samples, sorted: as measured, or drawn again with replacement (once per replicate),
    /// launches first (see the remarks on the class); only one launch's when this view is limited to it.
    /// </summary>
    private double[] Draw(Measurement m)
    {
        ArgumentNullException.ThrowIfNull(m);
        if (_draws.TryGetValue(m, out var cached)) return cached;
        _read.Add(m);
        var samples = m.Statistics.Samples;
        double[] draw;
        if (samples.Count == 0)
        {
            draw = [m.Statistics.Median];
        }
        else if (_launch is { } only)
        {
            var (offset, count) = Slice(m, only);
            draw = Resample(samples, offset, count, count);
        }
        else if (_random is not null && m.Launches.Count >= 2)
        {
            var picks = LaunchDraw(m.Launches.Count);
            var pooled = new List<double>(samples.Count);
            foreach (int pick in picks)
            {
                var (offset, count) = Slice(m, m.Launches[pick].Launch);
                pooled.AddRange(Resample(samples, offset, count, count));
            }
            draw = pooled.ToArray();
        }
        else
        {
            draw = Resample(samples, 0, samples.Count, samples.Count);
        }
        Array.Sort(draw);
        _draws[m] = draw;
        return draw;
    }

    /// <summary>Where launch <paramref name="launch"/>'s samples lie in the pooled list: all of them for a measurement taken in one launch.</summary>
    private static (int Offset, int Count) Slice(Measurement m, int launch)
    {
        if (m.Launches.Count == 0)
        {
            return launch == 0 ? (0, m.Statistics.Samples.Count) : throw new MissingLaunchException();
        }
        int offset = 0;
        foreach (var l in m.Launches)
        {
            if (l.Launch == launch) return (offset, l.SampleCount);
            offset += l.SampleCount;
        }
        throw new MissingLaunchException();
    }

    /// <summary>This replicate's draw of launches for measurements with <paramref name="count"/> launches: one draw shared by all of them.</summary>
    private int[] LaunchDraw(int count)
    {
        if (!_launchDraws.TryGetValue(count, out var picks))
        {
            picks = new int[count];
            for (int i = 0; i < count; i++) picks[i] = _random!.Next(count);
            _launchDraws[count] = picks;
        }
        return picks;
    }

    /// <summary><paramref name="n"/> values from samples[offset..offset+count]: a copy as measured, or drawn with replacement in a replicate.</summary>
    private double[] Resample(IReadOnlyList<double> samples, int offset, int count, int n)
    {
        var draw = new double[n];
        for (int i = 0; i < n; i++) draw[i] = samples[offset + (_random is null ? i : _random.Next(count))];
        return draw;
    }
}
