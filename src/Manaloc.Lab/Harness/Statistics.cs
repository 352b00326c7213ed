namespace Manaloc.Lab.Harness;

/// <summary>Order statistics over a set of samples of one metric, and the samples themselves.</summary>
/// <remarks>
/// A percentile is only given when there are enough samples for it to differ from the maximum:
/// p10 and p90 from <see cref="MinForP90"/> samples, p99 from <see cref="MinForP99"/>; below that it is
/// NaN, which every formatter prints as n/a (and JSON as "NaN"). The samples are kept so the verdict's bootstrap can resample them.
/// </remarks>
public sealed record Statistics
{
    /// <summary>Fewest samples p10 and p90 are given from.</summary>
    public const int MinForP90 = 10;
    /// <summary>Fewest samples p99 is given from.</summary>
    public const int MinForP99 = 100;

    /// <summary>Number of samples.</summary>
    public int Count { get; init; }
    /// <summary>Median (mean of the two middle samples when the count is even).</summary>
    public double Median { get; init; }
    /// <summary>Arithmetic mean.</summary>
    public double Mean { get; init; }
    /// <summary>Smallest sample.</summary>
    public double Min { get; init; }
    /// <summary>Largest sample.</summary>
    public double Max { get; init; }
    /// <summary>Sample standard deviation (n - 1); 0 for a single sample.</summary>
    public double StdDev { get; init; }
    /// <summary>10th percentile (nearest rank); NaN below <see cref="MinForP90"/> samples.</summary>
    public double P10 { get; init; }
    /// <summary>90th percentile (nearest rank); NaN below <see cref="MinForP90"/> samples.</summary>
    public double P90 { get; init; }
    /// <summary>99th percentile (nearest rank); NaN below <see cref="MinForP99"/> samples.</summary>
    public double P99 { get; init; }
    /// <summary>The samples in the order they were taken; empty for figures read from elsewhere.</summary>
    public IReadOnlyList<double> Samples { get; init; } = [];

    /// <summary>Computes the statistics of <paramref name="samples"/>.</summary>
    /// <exception cref="ArgumentException">No samples, or a sample is NaN.</exception>
    public static Statistics From(IReadOnlyCollection<double> samples)
    {
        ArgumentNullException.ThrowIfNull(samples);
        if (samples.Count == 0)
        {
            throw new ArgumentException("At least one sample is needed.", nameof(samples));
        }
        var taken = samples.ToArray();
        if (taken.Any(double.IsNaN))
        {
            throw new ArgumentException("A sample is NaN.", nameof(samples));
        }
        var sorted = (double[])taken.Clone();
        Array.Sort(sorted);
        int n = sorted.Length;
        double mean = sorted.Average();
        double variance = n > 1 ? sorted.Sum(x => (x - mean) * (x - mean)) / (n - 1) : 0;
        return new Statistics
        {
            Count = n,
            Median = MedianOfSorted(sorted),
            Mean = mean,
            Min = sorted[0],
            Max = sorted[^1],
            StdDev = Math.Sqrt(variance),
            P10 = n >= MinForP90 ? Percentile(sorted, 0.10) : double.NaN,
            P90 = n >= MinForP90 ? Percentile(sorted, 0.90) : double.NaN,
            P99 = n >= MinForP99 ? Percentile(sorted, 0.99) : double.NaN,
            Samples = taken,
        };
    }

    /// <summary>Median of an ascending, non-empty span.</summary>
    public static double MedianOfSorted(ReadOnlySpan<double> sorted)
    {
        if (sorted.IsEmpty) throw new ArgumentException("Empty sample set.", nameof(sorted));
        int n = sorted.Length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    /// <summary>Nearest-rank percentile of an ascending array.</summary>
    public static double Percentile(double[] sorted, double fraction)
    {
        ArgumentNullException.ThrowIfNull(sorted);
        if (sorted.Length == 0) throw new ArgumentException("Empty sample set.", nameof(sorted));
        if (fraction is < 0 or > 1) throw new ArgumentOutOfRangeException(nameof(fraction), fraction, "A percentile lies in [0, 1].");
        int rank = (int)Math.Ceiling(fraction * sorted.Length);
        return sorted[Math.Clamp(rank - 1, 0, sorted.Length - 1)];
    }
}
