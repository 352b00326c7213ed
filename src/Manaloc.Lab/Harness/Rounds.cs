namespace Manaloc.Lab.Harness;

/// <summary>
/// Interleaved measurement for noisy, shared machines: instead of all the samples of one variant and
/// then all of the next, one sample of every variant per round, in a balanced order, merged at the end.
/// A burst of outside load (another process, a descheduled vCPU) then hits every variant alike instead
/// of all the samples of one, so the ratios between variants survive it.
/// </summary>
public static class Rounds
{
    /// <summary>
    /// Position <paramref name="k"/> of round <paramref name="round"/> in a Williams design: over n rounds
    /// (n even) every variant takes every position once and follows every other variant once, so what one
    /// variant leaves behind (a GC, a dying thread, a hot cache) does not always fall on the same neighbour
    /// as a plain rotation would make it. Base sequence 0, 1, n−1, 2, n−2, …, shifted by the round.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="n"/> is not positive, or <paramref name="k"/> is outside 0..n−1, or <paramref name="round"/> is negative.</exception>
    public static int BalancedOrder(int n, int round, int k)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(n);
        ArgumentOutOfRangeException.ThrowIfNegative(round);
        if ((uint)k >= (uint)n) throw new ArgumentOutOfRangeException(nameof(k), k, $"The position must be in 0..{n - 1}.");
        int step = k == 0 ? 0 : k % 2 == 1 ? (k + 1) / 2 : n - k / 2;
        return (step + round) % n;
    }

    /// <summary>
    /// Measures <paramref name="variants"/> variants in <paramref name="rounds"/> rounds, one sample each per round in
    /// <see cref="BalancedOrder"/>, and returns one merged measurement per variant (<see cref="Merge"/>), in variant order,
    /// each marked with the rounds' group and its samples' rounds (<see cref="Measurement.RoundGroup"/>,
    /// <see cref="Measurement.SampleRounds"/>) so the bootstrap resamples the rounds, not each variant's samples apart.
    /// </summary>
    /// <param name="variants">How many variants (indices 0..variants−1).</param>
    /// <param name="rounds">Rounds; whole multiples of <paramref name="variants"/> keep the order balanced.</param>
    /// <param name="cancellation">Checked before every sample.</param>
    /// <param name="measureOne">Takes one sample: (variant index, round) → a measurement of exactly one sample.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="variants"/> or <paramref name="rounds"/> is not positive.</exception>
    public static Measurement[] Interleave(int variants, int rounds, CancellationToken cancellation, Func<int, int, Measurement> measureOne)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(variants);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(rounds);
        ArgumentNullException.ThrowIfNull(measureOne);
        var parts = new List<Measurement>[variants];
        for (int v = 0; v < variants; v++) parts[v] = new List<Measurement>(rounds);
        for (int round = 0; round < rounds; round++)
        {
            for (int k = 0; k < variants; k++)
            {
                int v = BalancedOrder(variants, round, k);
                cancellation.ThrowIfCancellationRequested();
                parts[v].Add(measureOne(v, round));
            }
        }
        // Every variant took one sample in each round, so the bootstrap can draw the rounds for all of them at once.
        // A random id: the children of one launch each count from the same start, so a counter would meet another's.
        long group = Random.Shared.NextInt64(1, long.MaxValue);
        int[] sampleRounds = [.. Enumerable.Range(0, rounds)];
        return parts.Select(p => Merge(p) with { RoundGroup = group, SampleRounds = sampleRounds }).ToArray();
    }

    /// <summary>One cell of <see cref="SampleCells"/>: a variant's body at a thread count, called as body(threadIndex, operations).</summary>
    /// <param name="Variant">The variant measured.</param>
    /// <param name="Parameters">Its parameters (a sweep adds <c>threads</c>).</param>
    /// <param name="Threads">1: sampled on the calling thread; more: through <see cref="ThreadSweep"/>.</param>
    /// <param name="Body">The work: body(threadIndex, operations).</param>
    public sealed record Cell(string Variant, Parameters Parameters, int Threads, Action<int, long> Body);

    /// <summary>
    /// Samples <paramref name="cells"/> in <paramref name="rounds"/> interleaved rounds of one short sample each
    /// (<see cref="Interleave"/>): every cell's operation count is calibrated once on one thread (a multi-thread cell
    /// then runs that count on each of its threads), and each sample follows an untimed run of
    /// <paramref name="untimedShare"/> of its count (on each of a sweep's threads), so a cell starts from its own working
    /// set rather than the cache the previous cell left.
    /// </summary>
    /// <param name="context">Status lines and cancellation.</param>
    /// <param name="cells">The cells, in the order their measurements are returned.</param>
    /// <param name="perRound">One round's settings: its sample target and warm-up.</param>
    /// <param name="rounds">Rounds; whole multiples of the cell count keep the order balanced.</param>
    /// <param name="pilot">How long calibration runs each cell (its warm-up) before fixing the cell's count.</param>
    /// <param name="untimedShare">
    /// The untimed run before each sample, as a share of the sample's count (at least one operation). A quarter suits a
    /// working set the cell brings back quickly; a cell whose working set is larger than the caches the cells share (a
    /// map of millions of entries read at random) needs as long as the sample or longer, or each sample times part of
    /// its own warm-up, by an amount that depends on which cell ran before it.
    /// </param>
    /// <returns>One merged measurement per cell, in cell order.</returns>
    public static Measurement[] SampleCells(ExperimentContext context, IReadOnlyList<Cell> cells, RunSettings perRound, int rounds, TimeSpan pilot, double untimedShare = 0.25)
    {
        ArgumentNullException.ThrowIfNull(context);
        ArgumentNullException.ThrowIfNull(cells);
        ArgumentNullException.ThrowIfNull(perRound);
        if (!(untimedShare >= 0 && untimedShare <= 16)) throw new ArgumentOutOfRangeException(nameof(untimedShare), untimedShare, "The untimed share of a sample must lie between 0 and 16.");
        var ops = new long[cells.Count];
        for (int c = 0; c < cells.Count; c++)
        {
            context.Status($"calibrating {cells[c].Variant} {Measurement.FormatParameters(cells[c].Parameters)}");
            var body = cells[c].Body;
            ops[c] = Bench.Calibrate(n => body(0, n), perRound with { WarmUp = pilot });
        }
        return Interleave(cells.Count, rounds, context.Cancellation, (c, round) =>
        {
            if (c == 0) context.Status($"{cells[0].Threads} thread(s): round {round + 1} of {rounds}");
            var cell = cells[c];
            long untimed = Math.Max(1, (long)(ops[c] * untimedShare));
            if (cell.Threads == 1)
            {
                cell.Body(0, untimed); // untimed: the cell's own working set back in cache
                return Bench.Sample(cell.Variant, n => cell.Body(0, n), ops[c], cell.Parameters);
            }
            // The sweep runs its untimed pass (the same share, on each thread) before its one sample, as above.
            return ThreadSweep.Measure(cell.Variant, cell.Threads, cell.Body, perRound, cell.Parameters, totalOperations: ops[c] * cell.Threads, warmUpOperations: untimed * cell.Threads);
        });
    }

    /// <summary>
    /// One launch's share of <paramref name="total"/> rounds over <paramref name="variants"/> variants, in whole Williams
    /// cycles (at least one): the launches' rounds pool, so more launches need fewer rounds each.
    /// </summary>
    public static int PerLaunch(RunSettings settings, int total, int variants)
    {
        ArgumentNullException.ThrowIfNull(settings);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(variants);
        int share = settings.PerLaunch(total);
        return Math.Max(variants, (share + variants - 1) / variants * variants);
    }

    /// <summary>One measurement from rounds of one sample each: the rounds' samples together, their costs summed.</summary>
    /// <exception cref="ArgumentException"><paramref name="rounds"/> is empty, or a round took other than one sample.</exception>
    public static Measurement Merge(IReadOnlyList<Measurement> rounds)
    {
        ArgumentNullException.ThrowIfNull(rounds);
        if (rounds.Count == 0) throw new ArgumentException("No rounds to merge.", nameof(rounds));
        var samples = new List<double>(rounds.Count);
        foreach (var r in rounds)
        {
            if (r.Statistics.Count != 1) throw new ArgumentException($"A round takes exactly one sample; one of {r.Variant} took {r.Statistics.Count}.", nameof(rounds));
            samples.Add(r.Statistics.Median);
        }
        var stats = Statistics.From(samples);
        long operations = rounds.Sum(r => r.OperationsPerSample);
        long allocated = rounds.Sum(r => r.AllocatedBytes);
        return rounds[0] with
        {
            Statistics = stats,
            NsPerOp = stats.Median,
            OpsPerSecond = stats.Median > 0 ? 1e9 / stats.Median : null,
            AllocatedBytes = allocated,
            AllocatedBytesPerOp = operations > 0 ? (double)allocated / operations : null,
            Gc = new GcCounts { Gen0 = rounds.Sum(r => r.Gc.Gen0), Gen1 = rounds.Sum(r => r.Gc.Gen1), Gen2 = rounds.Sum(r => r.Gc.Gen2) },
            GcPauseMs = rounds.Sum(r => r.GcPauseMs),
            LockContentions = rounds.Sum(r => r.LockContentions),
            PeakWorkingSetBytes = rounds.Max(r => r.PeakWorkingSetBytes),
            Placement = Placement.Combine([.. rounds.Select(r => r.Placement)]),
        };
    }
}
