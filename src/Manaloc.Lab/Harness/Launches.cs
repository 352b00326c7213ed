namespace Manaloc.Lab.Harness;

/// <summary>One launch's share of a merged <see cref="Measurement"/>.</summary>
/// <param name="Launch">The launch, from 0.</param>
/// <param name="SampleCount">How many of the pooled samples it took (they follow the earlier launches' in <see cref="Statistics.Samples"/>).</param>
/// <param name="Median">The median of its own samples.</param>
public sealed record LaunchFigures(int Launch, int SampleCount, double Median)
{
    /// <summary>Where its threads ran, where recorded.</summary>
    public Placement? Placement { get; init; }

    /// <summary>Its managed bytes allocated per operation, where measured.</summary>
    public double? AllocatedBytesPerOp { get; init; }

    /// <summary>Its further named figures (a child's counts, a server's per-phase figures).</summary>
    public IReadOnlyDictionary<string, double> Metrics { get; init; } = new Dictionary<string, double>();

    /// <summary>Its <see cref="Measurement.RoundGroup"/>: the rounds it sampled this measurement in with others; null when not in rounds.</summary>
    public long? RoundGroup { get; init; }
}

/// <summary>What one launch of an experiment recorded: a child process's whole run of it.</summary>
/// <param name="Measurements">Its measurements.</param>
/// <param name="Notes">Its notes.</param>
/// <param name="Tables">Its tables.</param>
public sealed record LaunchRun(IReadOnlyList<Measurement> Measurements, IReadOnlyList<string> Notes, IReadOnlyList<ResultTable> Tables);

/// <summary>
/// Launches: an experiment runs whole in several fresh processes (<see cref="RunSettings.Launches"/>), because
/// samples taken inside one process are correlated: where its threads land on the CPUs, what the JIT chose, how
/// its heap is laid out. Merging keeps each launch's samples apart, so the bootstrap can resample launches first
/// and then samples within them (<see cref="Figures"/>), and a difference between processes widens the interval.
/// </summary>
public static class Launches
{
    /// <summary>
    /// Merges the launches' measurements of the same variant, parameters, thread count and unit into one whose
    /// <see cref="Measurement.Launches"/> lists each launch's share and whose statistics pool their samples in
    /// launch order. Counts (allocated bytes, collections, pauses, contentions) are summed, per-operation figures and
    /// named metrics take the launches' mean, the peak working set their maximum. Notes and tables come from the
    /// first launch (the others say the same with other figures).
    /// </summary>
    public static LaunchRun Merge(IReadOnlyList<LaunchRun> runs)
    {
        ArgumentNullException.ThrowIfNull(runs);
        if (runs.Count == 0) throw new ArgumentException("At least one launch is needed.", nameof(runs));
        var groups = new Dictionary<(string, string, int, Unit), List<(int Launch, Measurement M)>>();
        var order = new List<(string, string, int, Unit)>();
        for (int launch = 0; launch < runs.Count; launch++)
        {
            foreach (var m in runs[launch].Measurements)
            {
                var key = (m.Variant, m.ParameterKey, m.Threads, m.Unit);
                if (!groups.TryGetValue(key, out var list))
                {
                    groups[key] = list = [];
                    order.Add(key);
                }
                list.Add((launch, m));
            }
        }
        var merged = order.Select(k => Merge(groups[k])).ToArray();
        return new LaunchRun(merged, runs[0].Notes, runs[0].Tables);
    }

    private static Measurement Merge(List<(int Launch, Measurement M)> parts)
    {
        var samples = new List<double>();
        var launches = new List<LaunchFigures>(parts.Count);
        // The rounds are kept only when every launch sampled in rounds, so they stay aligned with the pooled samples.
        bool inRounds = parts.All(p => p.M.RoundGroup is not null && p.M.SampleRounds.Count == p.M.Statistics.Samples.Count && p.M.SampleRounds.Count > 0);
        var sampleRounds = inRounds ? new List<int>() : null;
        foreach (var (launch, m) in parts)
        {
            // A measurement read from elsewhere carries no samples: its median stands for its one observation.
            IReadOnlyList<double> own = m.Statistics.Samples.Count > 0 ? m.Statistics.Samples : [m.Statistics.Median];
            samples.AddRange(own);
            sampleRounds?.AddRange(m.SampleRounds);
            launches.Add(new LaunchFigures(launch, own.Count, m.Statistics.Median)
            {
                Placement = m.Placement,
                AllocatedBytesPerOp = m.AllocatedBytesPerOp,
                Metrics = m.Metrics,
                RoundGroup = inRounds ? m.RoundGroup : null,
            });
        }
        var first = parts[0].M;
        var all = parts.Select(p => p.M).ToArray();
        var metrics = all.SelectMany(m => m.Metrics.Keys).Distinct(StringComparer.Ordinal)
            .ToDictionary(k => k, k => all.Where(m => m.Metrics.ContainsKey(k)).Average(m => m.Metrics[k]), StringComparer.Ordinal);
        return first with
        {
            Statistics = Statistics.From(samples),
            Launches = launches,
            RoundGroup = inRounds ? first.RoundGroup : null,
            SampleRounds = sampleRounds is null ? [] : sampleRounds.ToArray(),
            Placement = null,
            NsPerOp = Mean(all.Select(m => m.NsPerOp)),
            OpsPerSecond = Mean(all.Select(m => m.OpsPerSecond)),
            AllocatedBytesPerOp = Mean(all.Select(m => m.AllocatedBytesPerOp)),
            AllocatedBytes = all.Sum(m => m.AllocatedBytes),
            Gc = new GcCounts { Gen0 = all.Sum(m => m.Gc.Gen0), Gen1 = all.Sum(m => m.Gc.Gen1), Gen2 = all.Sum(m => m.Gc.Gen2) },
            GcPauseMs = all.Sum(m => m.GcPauseMs),
            LockContentions = all.Sum(m => m.LockContentions),
            PeakWorkingSetBytes = all.Max(m => m.PeakWorkingSetBytes),
            Metrics = metrics,
        };
    }

    /// <summary>
    /// The measurement as launch <paramref name="launch"/> (an index into <see cref="Measurement.Launches"/>) alone
    /// recorded it: its samples, statistics, bytes per operation and named figures. What a metric's
    /// <see cref="Figures.Value"/> reads per launch.
    /// </summary>
    public static Measurement View(Measurement merged, int launch)
    {
        ArgumentNullException.ThrowIfNull(merged);
        var l = merged.Launches[launch];
        int offset = merged.Launches.Take(launch).Sum(x => x.SampleCount);
        var samples = merged.Statistics.Samples.Skip(offset).Take(l.SampleCount).ToArray();
        bool inRounds = l.RoundGroup is not null && merged.SampleRounds.Count == merged.Statistics.Samples.Count;
        return merged with
        {
            Statistics = samples.Length > 0 ? Statistics.From(samples) : merged.Statistics,
            RoundGroup = inRounds ? l.RoundGroup : null,
            SampleRounds = inRounds ? merged.SampleRounds.Skip(offset).Take(l.SampleCount).ToArray() : [],
            AllocatedBytesPerOp = l.AllocatedBytesPerOp,
            Metrics = l.Metrics,
            Placement = l.Placement,
            Launches = [],
        };
    }

    private static double? Mean(IEnumerable<double?> values)
    {
        var present = values.Where(v => v is not null).Select(v => v!.Value).ToArray();
        return present.Length == 0 ? null : present.Average();
    }
}
