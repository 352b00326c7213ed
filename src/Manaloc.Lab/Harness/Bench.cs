using System.Diagnostics;

namespace Manaloc.Lab.Harness;

/// <summary>
/// Measures a body on one thread: warm-up, calibration to the sample target, repeated samples,
/// allocation, GC and contention captured around the samples only.
/// </summary>
/// <remarks>
/// A body receives an operation count and performs that many operations itself, so the harness's
/// delegate call is paid once per sample, not once per operation.
/// </remarks>
public static class Bench
{
    /// <summary>Measures <paramref name="body"/> on the calling thread.</summary>
    /// <param name="variant">Variant name.</param>
    /// <param name="body">Performs the given number of operations.</param>
    /// <param name="settings">Warm-up, sample target and count.</param>
    /// <param name="parameters">Parameters recorded with the measurement.</param>
    /// <param name="fixedOperations">Use exactly this many operations per sample instead of calibrating.</param>
    public static Measurement Measure(
        string variant,
        Action<long> body,
        RunSettings settings,
        Parameters? parameters = null,
        long? fixedOperations = null)
    {
        ArgumentNullException.ThrowIfNull(body);
        ArgumentNullException.ThrowIfNull(settings);
        long ops = fixedOperations ?? Calibrate(body, settings);
        if (ops < 1) throw new ArgumentOutOfRangeException(nameof(fixedOperations), ops, "At least one operation per sample.");
        if (fixedOperations is not null)
        {
            WarmUp(body, ops, settings.WarmUp);
        }

        var samples = new double[settings.Samples];
        var before = GcSnapshot.Take(allThreads: false);
        for (int i = 0; i < samples.Length; i++)
        {
            long start = Stopwatch.GetTimestamp();
            body(ops);
            long end = Stopwatch.GetTimestamp();
            samples[i] = Stopwatch.GetElapsedTime(start, end).TotalNanoseconds / ops;
        }
        var after = GcSnapshot.Take(allThreads: false);
        return Build(variant, parameters, threads: 1, ops, samples, before, after);
    }

    /// <summary>Takes exactly one sample of <paramref name="ops"/> operations, no warm-up: one round of an interleaved comparison.</summary>
    internal static Measurement Sample(string variant, Action<long> body, long ops, Parameters? parameters)
    {
        var before = GcSnapshot.Take(allThreads: false);
        long start = Stopwatch.GetTimestamp();
        body(ops);
        long end = Stopwatch.GetTimestamp();
        var after = GcSnapshot.Take(allThreads: false);
        return Build(variant, parameters, threads: 1, ops, [Stopwatch.GetElapsedTime(start, end).TotalNanoseconds / ops], before, after);
    }

    /// <summary>Builds a time-per-operation measurement from samples of nanoseconds per operation.</summary>
    internal static Measurement Build(
        string variant, Parameters? parameters, int threads, long ops,
        double[] nsPerOpSamples, GcSnapshot before, GcSnapshot after)
    {
        var stats = Statistics.From(nsPerOpSamples);
        long totalOps = ops * nsPerOpSamples.Length;
        long allocated = Math.Max(0, after.AllocatedBytes - before.AllocatedBytes);
        return new Measurement
        {
            Variant = variant,
            Parameters = parameters ?? Harness.Parameters.None,
            Threads = threads,
            Unit = "ns/op",
            LowerIsBetter = true,
            Statistics = stats,
            OperationsPerSample = ops,
            NsPerOp = stats.Median,
            OpsPerSecond = stats.Median > 0 ? 1e9 / stats.Median : null,
            AllocatedBytes = allocated,
            AllocatedBytesPerOp = (double)allocated / totalOps,
            Gc = new GcCounts { Gen0 = after.Gen0 - before.Gen0, Gen1 = after.Gen1 - before.Gen1, Gen2 = after.Gen2 - before.Gen2 },
            GcPauseMs = (after.Pause - before.Pause).TotalMilliseconds,
            LockContentions = after.Contentions - before.Contentions,
            PeakWorkingSetBytes = GcSnapshot.PeakWorkingSet(),
        };
    }

    /// <summary>
    /// Finds an operation count whose run takes about one sample target, warming up as it goes;
    /// keeps running until the warm-up time is spent.
    /// </summary>
    internal static long Calibrate(Action<long> body, RunSettings settings)
    {
        double targetNs = settings.SampleTarget.TotalNanoseconds;
        long ops = 1;
        var warmUpStart = Stopwatch.GetTimestamp();
        double nsPerOp;
        while (true)
        {
            long start = Stopwatch.GetTimestamp();
            body(ops);
            double elapsed = Stopwatch.GetElapsedTime(start).TotalNanoseconds;
            if (elapsed >= targetNs / 8 || ops >= 1L << 40)
            {
                nsPerOp = elapsed / ops;
                break;
            }
            ops = elapsed < targetNs / 1000 ? ops * 16 : ops * 2;
        }
        ops = ClampOps(targetNs / Math.Max(nsPerOp, 0.01));
        // Warm-up: keep running full samples until the time is spent, recalibrating as the JIT tiers
        // up. The count follows the fastest round seen, never the last one: a round in which the
        // thread was descheduled would otherwise shrink the count until a sample times the
        // scheduler instead of the body. At least MinimumSizingRounds run even when the warm-up is shorter.
        double fastest = nsPerOp;
        for (int round = 0; round < MinimumSizingRounds || Stopwatch.GetElapsedTime(warmUpStart) < settings.WarmUp; round++)
        {
            long start = Stopwatch.GetTimestamp();
            body(ops);
            fastest = Math.Min(fastest, Stopwatch.GetElapsedTime(start).TotalNanoseconds / ops);
            ops = ClampOps(targetNs / Math.Max(fastest, 0.01));
        }
        return ops;
    }

    /// <summary>
    /// Rounds at the computed count that every calibration runs, however short its warm-up. The count comes from one run,
    /// and a run the host slowed (the thread descheduled for a time slice) makes it as much too small as the run was slow,
    /// 100x for a 1 ms run that lost 100 ms: the first round at that count takes a fraction of the sample target and
    /// resizes it from its own time, the second runs at the corrected count. A warm-up of two sample targets or more (every
    /// mode's default) runs these rounds anyway, so they cost only measurements that chose a shorter warm-up.
    /// </summary>
    internal const int MinimumSizingRounds = 2;

    /// <summary>Runs <paramref name="ops"/> operations of <paramref name="body"/> until <paramref name="warmUp"/> is spent (at least once).</summary>
    internal static void WarmUp(Action<long> body, long ops, TimeSpan warmUp)
    {
        var start = Stopwatch.GetTimestamp();
        do
        {
            body(ops);
        }
        while (Stopwatch.GetElapsedTime(start) < warmUp);
    }

    private static long ClampOps(double ops) => (long)Math.Clamp(ops, 1, 1L << 40);
}
