namespace Manaloc.Lab.Harness;

/// <summary>Order statistics over a set of samples of one metric.</summary>
public sealed record Statistics
{
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
    /// <summary>90th percentile (nearest rank).</summary>
    public double P90 { get; init; }
    /// <summary>99th percentile (nearest rank).</summary>
    public double P99 { get; init; }

    /// <summary>Computes the statistics of <paramref name="samples"/>.</summary>
    /// <exception cref="ArgumentException">No samples, or a sample is NaN.</exception>
    public static Statistics From(IReadOnlyCollection<double> samples)
    {
        ArgumentNullException.ThrowIfNull(samples);
        if (samples.Count == 0)
        {
            throw new ArgumentException("At least one sample is needed.", nameof(samples));
        }
        var sorted = samples.ToArray();
        if (sorted.Any(double.IsNaN))
        {
            throw new ArgumentException("A sample is NaN.", nameof(samples));
        }
        Array.Sort(sorted);
        int n = sorted.Length;
        double median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        double mean = sorted.Average();
        double variance = n > 1 ? sorted.Sum(x => (x - mean) * (x - mean)) / (n - 1) : 0;
        return new Statistics
        {
            Count = n,
            Median = median,
            Mean = mean,
            Min = sorted[0],
            Max = sorted[^1],
            StdDev = Math.Sqrt(variance),
            P90 = Percentile(sorted, 0.90),
            P99 = Percentile(sorted, 0.99),
        };
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
