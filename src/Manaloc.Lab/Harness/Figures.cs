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
/// <para>
/// Measurements sampled in the same interleaved rounds (<see cref="Measurement.RoundGroup"/>, <see cref="Rounds.Interleave"/>)
/// are resampled as pairs: within each drawn launch, the replicate draws the group's rounds once with replacement and
/// every measurement of the group takes its samples of the drawn rounds. The round, not the sample, is the unit that
/// was repeated: in a round every cell ran back to back, so a change in the machine's speed on the scale of a round
/// (another process, a frequency step) moves all of them together and cancels in their ratio. Drawing each cell's
/// samples apart would mix one cell's fast rounds with another's slow ones and put that drift into the interval.
/// The rounds are independent repetitions as the samples were (the order within a round is balanced over the rounds),
/// so the draw stays a valid bootstrap; it only keeps what the design made common, common. Measurements not taken in
/// rounds keep the independent draw: two measurements taken one after the other share no round, and pairing them by
/// sample index would hide a trend between them. A measurement whose rounds do not match its own count (a round
/// missing or taken twice) falls back to the independent draw.
/// </para>
/// </remarks>
public sealed class Figures
{
    private readonly Random? _random;
    private readonly Random? _rounds;
    private readonly int? _launch;
    private readonly Dictionary<Measurement, double[]> _draws = new(ReferenceEqualityComparer.Instance);
    private readonly Dictionary<int, int[]> _launchDraws = [];
    private readonly Dictionary<(long Group, int Launch, int Pick, int Rounds), int[]> _roundDraws = [];
    private readonly HashSet<Measurement> _read = new(ReferenceEqualityComparer.Instance);

    /// <summary>The measured figures (<paramref name="random"/> null) or one bootstrap replicate of them.</summary>
    /// <param name="all">The run's measurements.</param>
    /// <param name="random">Draws a replicate; null for the figures as measured.</param>
    /// <param name="launch">Only this launch's samples (and, in a replicate, only they are resampled); null for all launches.</param>
    /// <param name="rounds">
    /// Draws the rounds of measurements sampled in rounds (see the remarks); null to draw them with <paramref name="random"/>.
    /// A stream of their own keeps every other measurement's draw what it would be without them.
    /// </param>
    internal Figures(IReadOnlyList<Measurement> all, Random? random, int? launch = null, Random? rounds = null)
    {
        All = all;
        _random = random;
        _launch = launch;
        _rounds = rounds ?? random;
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
    /// <remarks>
    /// A draw is a multiset of the measurement's samples: it is counted (how many times each sample was drawn) and read
    /// out in the samples' sorted order, made once per measurement, rather than sorted: linear in the samples instead of
    /// n log n per replicate, the same sorted values, and the same random numbers drawn in the same order.
    /// </remarks>
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
        else
        {
            var counts = new int[samples.Count];
            int drawn;
            if (_launch is { } only)
            {
                drawn = CountLaunch(m, only, pick: 0, counts);
            }
            else if (_random is not null && m.Launches.Count >= 2)
            {
                var picks = LaunchDraw(m.Launches.Count);
                drawn = 0;
                for (int p = 0; p < picks.Length; p++) drawn += CountLaunch(m, m.Launches[picks[p]].Launch, p, counts);
            }
            else
            {
                drawn = m.Launches.Count == 0 ? CountLaunch(m, 0, pick: 0, counts)
                    : m.Launches.Count == 1 && m.Launches[0].SampleCount == samples.Count ? CountLaunch(m, m.Launches[0].Launch, pick: 0, counts)
                    : Count(0, samples.Count, samples.Count, counts);
            }
            draw = new double[drawn];
            int n = 0;
            foreach (int index in SortedOrder.GetValue(m, SortOrder))
            {
                for (int c = counts[index]; c > 0; c--) draw[n++] = samples[index];
            }
        }
        _draws[m] = draw;
        return draw;
    }

    /// <summary>Each measurement's sample indices in the order of their values (as <see cref="Array.Sort{T}(T[])"/> orders them), made once.</summary>
    private static readonly System.Runtime.CompilerServices.ConditionalWeakTable<Measurement, int[]> SortedOrder = new();

    private static int[] SortOrder(Measurement m)
    {
        var values = m.Statistics.Samples.ToArray();
        var order = new int[values.Length];
        for (int i = 0; i < order.Length; i++) order[i] = i;
        Array.Sort(values, order);
        return order;
    }

    /// <summary>
    /// Counts into <paramref name="counts"/> (indexed like the pooled samples) launch <paramref name="launch"/>'s samples
    /// of <paramref name="m"/>: as measured, or in a replicate drawn again, by rounds when the measurement was sampled in
    /// rounds (see the remarks on the class), else sample by sample; returns how many it counted.
    /// </summary>
    /// <param name="pick">Which of the replicate's launch draws this is: a launch drawn twice takes two draws of its rounds.</param>
    private int CountLaunch(Measurement m, int launch, int pick, int[] counts)
    {
        var (offset, count, group) = Slice(m, launch);
        if (_random is null || group is not { } g || !RoundsOf(m, offset, count, out int roundCount, out int[] byRound))
        {
            return Count(offset, count, count, counts);
        }
        // The sample stream advances as an independent draw of this slice would have advanced it, so every measurement not
        // taken in rounds draws exactly what it would if none were marked (its interval does not move by a hair).
        for (int i = 0; i < count; i++) _random.Next(count);
        var rounds = RoundDraw(g, launch, pick, roundCount);
        int perRound = count / roundCount;
        int n = 0;
        foreach (int round in rounds)
        {
            for (int j = 0; j < perRound; j++) counts[offset + byRound[round * perRound + j]]++;
            n += perRound;
        }
        return n;
    }

    /// <summary>
    /// The slice's samples ordered by round (byRound[r·k + j] is the index, within the slice, of round r's j-th sample),
    /// when its rounds are 0..<paramref name="roundCount"/>−1 with the same number k of samples each; false otherwise
    /// (no rounds recorded, a round missing or taken more often than the others), and the caller draws samples apart.
    /// </summary>
    private static bool RoundsOf(Measurement m, int offset, int count, out int roundCount, out int[] byRound)
    {
        roundCount = 0;
        byRound = [];
        var rounds = m.SampleRounds;
        if (count == 0 || rounds.Count != m.Statistics.Samples.Count) return false;
        int max = -1;
        for (int i = 0; i < count; i++)
        {
            int r = rounds[offset + i];
            if (r < 0 || r >= count) return false;
            max = Math.Max(max, r);
        }
        int perRoundCount = count / (max + 1);
        if (perRoundCount * (max + 1) != count) return false;
        var filled = new int[max + 1];
        var order = new int[count];
        for (int i = 0; i < count; i++)
        {
            int r = rounds[offset + i];
            if (filled[r] == perRoundCount) return false;
            order[r * perRoundCount + filled[r]++] = i;
        }
        roundCount = max + 1;
        byRound = order;
        return true;
    }

    /// <summary>
    /// This replicate's draw of <paramref name="roundCount"/> rounds of group <paramref name="group"/> in launch
    /// <paramref name="launch"/>'s <paramref name="pick"/>-th draw: one draw shared by every measurement of the group.
    /// </summary>
    private int[] RoundDraw(long group, int launch, int pick, int roundCount)
    {
        var key = (group, launch, pick, roundCount);
        if (!_roundDraws.TryGetValue(key, out var rounds))
        {
            rounds = new int[roundCount];
            for (int i = 0; i < roundCount; i++) rounds[i] = _rounds!.Next(roundCount);
            _roundDraws[key] = rounds;
        }
        return rounds;
    }

    /// <summary>
    /// Where launch <paramref name="launch"/>'s samples lie in the pooled list (all of them for a measurement taken in one
    /// launch) and the rounds' group they were sampled in, if any.
    /// </summary>
    private static (int Offset, int Count, long? Group) Slice(Measurement m, int launch)
    {
        if (m.Launches.Count == 0)
        {
            return launch == 0 ? (0, m.Statistics.Samples.Count, m.RoundGroup) : throw new MissingLaunchException();
        }
        int offset = 0;
        foreach (var l in m.Launches)
        {
            if (l.Launch == launch) return (offset, l.SampleCount, l.RoundGroup);
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

    /// <summary>Counts <paramref name="n"/> of samples[offset..offset+count]: each once as measured, or drawn with replacement in a replicate; returns <paramref name="n"/>.</summary>
    private int Count(int offset, int count, int n, int[] counts)
    {
        for (int i = 0; i < n; i++) counts[offset + (_random is null ? i : _random.Next(count))]++;
        return n;
    }
}
