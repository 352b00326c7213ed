namespace Manaloc.Lab.Experiments;

/// <summary>The net ratio: the allocators compared net of the loop's own cost, per round, with a bootstrap interval.</summary>
public sealed partial class HeapContention
{
    /// <summary>Metrics of the slab's two-thread measurement: the net ratio from the rounds and its 95% bootstrap interval.</summary>
    internal const string NetMedianMetric = "netRatio";
    /// <summary>A sample's CPU time (all its threads) per operation, in ns: what the net ratio is computed from where available.</summary>
    internal const string CpuNsPerOpMetric = ThreadSweep.CpuNsPerOpMetric;
    internal const string NetLowMetric = "netRatioLow95";
    internal const string NetHighMetric = "netRatioHigh95";

    /// <summary>(malloc − floor) / (slab − floor), ns per operation; null when a figure is missing or the floor is not below both.</summary>
    internal static double? NetRatio(double? malloc, double? slab, double? floor)
    {
        if (malloc is not { } m0 || slab is not { } s0 || floor is not { } f) return null;
        double m = m0 - f, s = s0 - f;
        return m > 0 && s > 0 ? m / s : null;
    }

    private static double? NetOfMedians(double malloc, double slab, double floor) => NetRatio(malloc, slab, floor);

    /// <summary>
    /// The net ratio from per-round samples (index = round; the three variants sampled in the same round, close in
    /// time): each round's own (malloc − floor) / (slab − floor), then the median over the rounds, with a 95%
    /// percentile-bootstrap interval from 2000 resamples of the rounds. Pairing within a round cancels load that
    /// lasts a round; the median drops rounds where a burst hit one variant's sample. Rounds whose ratio is
    /// undefined (the floor not below both) are left out. Deterministic (fixed seed). Null when no round gives a ratio.
    /// </summary>
    /// <exception cref="ArgumentException">The arrays differ in length or are empty.</exception>
    internal static (double Median, double Low, double High)? NetRatioOfRounds(double[] malloc, double[] slab, double[] floor)
    {
        ArgumentNullException.ThrowIfNull(malloc);
        ArgumentNullException.ThrowIfNull(slab);
        ArgumentNullException.ThrowIfNull(floor);
        int n = malloc.Length;
        if (n == 0 || slab.Length != n || floor.Length != n) throw new ArgumentException("One sample per round of each variant, at least one round.", nameof(malloc));
        var ratios = new List<double>(n);
        for (int r = 0; r < n; r++)
        {
            if (NetOfMedians(malloc[r], slab[r], floor[r]) is double ratio) ratios.Add(ratio);
        }
        if (ratios.Count == 0) return null;
        double[] rounds = [.. ratios];
        double point = Median(rounds);
        var random = new Random(20251125);
        const int Resamples = 2000;
        var estimates = new double[Resamples];
        var resample = new double[rounds.Length];
        for (int b = 0; b < Resamples; b++)
        {
            for (int i = 0; i < resample.Length; i++) resample[i] = rounds[random.Next(rounds.Length)];
            estimates[b] = Median(resample);
        }
        Array.Sort(estimates);
        return (point, Statistics.Percentile(estimates, 0.025), Statistics.Percentile(estimates, 0.975));
    }

    private static double Median(double[] values)
    {
        var sorted = (double[])values.Clone();
        Array.Sort(sorted);
        int mid = sorted.Length / 2;
        return sorted.Length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    }
}
