using System.Buffers;
using BitFaster.Caching.Lfu;
using BitFaster.Caching.Scheduler;
using Manaloc.Collections;
using Cache = Manaloc.Collections.NativeCache;

namespace Manaloc.Lab.Experiments;

/// <summary>
/// The native-cache experiment's hit ratios: three generated traces over a working set, replayed through NativeCache at
/// a byte budget of a quarter of the working set's key and value bytes, and through ConcurrentLfu at two capacities: the
/// entries NativeCache held at that budget in the same replay (the policy against the policy) and the budget over the
/// mean key and value size (the policy and the overhead per entry together). A miss stores the entry, as a cache-aside
/// caller does. Nothing here is timed; it runs in the launch's own process.
/// </summary>
internal static class NativeCacheTraces
{
    public const string Zipf = "zipf-0.9";
    public const string Scan = "zipf-0.9-with-scans";
    public const string Loop = "loop";

    /// <summary>The traces in display order.</summary>
    public static readonly IReadOnlyList<string> All = [Zipf, Scan, Loop];

    /// <summary>ConcurrentLfu's capacity: NativeCache's held entries, or the budget ÷ the mean entry.</summary>
    public const string Matched = "entries NativeCache holds", ByBytes = "budget ÷ mean entry";

    /// <summary>The Zipf traces' exponent.</summary>
    public const double Theta = 0.9;

    /// <summary>Each trace's measured segments (after one segment that fills the cache): the samples of its hit ratio.</summary>
    public const int Segments = 8;

    /// <summary>Distinct keys of the Zipf traces.</summary>
    public static int WorkingSet(RunSettings s) => s.Pick(smoke: 4_000, quick: 16_000, full: 200_000);

    /// <summary>The budget: a quarter of the working set's key and value bytes.</summary>
    public static long Budget(int workingSet)
    {
        long bytes = 0;
        for (int i = 0; i < workingSet; i++) bytes += NativeCacheWorkload.KeyLength(i) + NativeCacheWorkload.ValueLength(i);
        return bytes / 4;
    }

    /// <summary>
    /// Zipf <see cref="Theta"/> over the working set, and between every working set's worth of those a one-pass scan of
    /// a cache's worth (by the nominal budget ÷ mean entry) of keys never seen before or after.
    /// </summary>
    public static int[] ScanTrace(int workingSet, int length, int seed)
    {
        var zipf = NativeCacheWorkload.ZipfTrace(workingSet, length, seed, Theta);
        int scan = CacheSubjects.CapacityFor(Budget(workingSet));
        var trace = new int[length];
        int z = 0, fresh = workingSet;
        for (int at = 0; at < length;)
        {
            for (int i = 0; i < workingSet && at < length; i++) trace[at++] = zipf[z++];
            for (int i = 0; i < scan && at < length; i++) trace[at++] = fresh++;
        }
        return trace;
    }

    /// <summary>Keys 0..<paramref name="loopLength"/>-1 in order, again and again.</summary>
    public static int[] LoopTrace(int loopLength, int length)
    {
        var trace = new int[length];
        for (int at = 0; at < length; at++) trace[at] = at % loopLength;
        return trace;
    }

    /// <summary>Replays the three traces and records each cache's hit ratio per segment.</summary>
    public static void Run(ExperimentContext context)
    {
        int workingSet = WorkingSet(context.Settings);
        int length = workingSet * (Segments + 1);
        long budget = Budget(workingSet);
        // The largest index a trace uses: the scan trace's fresh keys.
        var scan = ScanTrace(workingSet, length, seed: 8);
        var keys = NativeCacheWorkload.KeyStrings(Math.Max(scan.Max(), workingSet * 2) + 1);
        var traces = new Dictionary<string, int[]>
        {
            [Zipf] = NativeCacheWorkload.ZipfTrace(workingSet, length, seed: 7, Theta),
            [Scan] = scan,
        };
        long held = 0;
        foreach (string trace in All)
        {
            context.Cancellation.ThrowIfCancellationRequested();
            context.Status($"hit ratio, {trace}");
            // The loop is slightly larger than the cache: a tenth more keys than NativeCache held on the Zipf trace.
            var replay = trace == Loop ? LoopTrace((int)Math.Min(keys.Length, held * 11 / 10), length) : traces[trace];
            var p = Parameters.Of(("op", "hit-ratio"), ("trace", trace));
            var native = ReplayNative(keys, replay, budget);
            held = native.Held;
            Record(context, CacheSubjects.Native, p, native, budget);
            Record(context, CacheSubjects.Lfu, p.With("capacity", Matched), ReplayLfu(keys, replay, (int)Math.Max(1, native.Held)), budget);
            Record(context, CacheSubjects.Lfu, p.With("capacity", ByBytes), ReplayLfu(keys, replay, CacheSubjects.CapacityFor(budget)), budget);
        }
        context.Note($"Hit ratios: a working set of {workingSet:N0} keys, a budget of a quarter of its key and value bytes ({Format.Value(budget, "bytes")}); traces of {length:N0} requests, "
            + $"the first ninth filling the cache, the rest in {Segments} segments (the samples). Zipf θ = {Theta}; the scans are one pass over a cache's worth of fresh keys after every working set's worth of Zipf requests; "
            + "the loop is a tenth longer than NativeCache's held entries. ConcurrentLfu runs its maintenance in the caller (ForegroundScheduler), so no read is dropped and each replay is deterministic.");
    }

    private readonly record struct Replay(double[] HitPercents, long Held, int Capacity);

    private static void Record(ExperimentContext context, string variant, Parameters p, Replay replay, long budget)
        => context.RecordSamples(variant, Unit.Percent, replay.HitPercents, p, lowerIsBetter: false, metrics: new Dictionary<string, double>
        {
            ["entriesHeld"] = replay.Held,
            ["capacity"] = replay.Capacity,
            ["budgetBytes"] = budget,
        });

    private static Replay ReplayNative(string[] keys, int[] trace, long budget)
    {
        using var cache = new Cache(CacheSubjects.NativeOptions(budget));
        var writer = new ArrayBufferWriter<byte>(NativeCacheWorkload.MaxValueBytes);
        var hits = Segmented(trace, index =>
        {
            writer.ResetWrittenCount();
            if (cache.TryGet(keys[index].AsSpan(), writer)) return true;
            cache.Set(keys[index].AsSpan(), NativeCacheWorkload.Value(index));
            return false;
        });
        return new Replay(hits, cache.Count, 0);
    }

    private static Replay ReplayLfu(string[] keys, int[] trace, int capacity)
    {
        var cache = new ConcurrentLfu<string, byte[]>(1, Math.Max(capacity, 3), new ForegroundScheduler(), StringComparer.Ordinal);
        var hits = Segmented(trace, index =>
        {
            if (cache.TryGet(keys[index], out _)) return true;
            cache.AddOrUpdate(keys[index], NativeCacheWorkload.Value(index).ToArray());
            return false;
        });
        return new Replay(hits, cache.Count, capacity);
    }

    /// <summary>The hit percentage of each of the <see cref="Segments"/> segments after the first ninth of <paramref name="trace"/>.</summary>
    private static double[] Segmented(int[] trace, Func<int, bool> request)
    {
        int segment = trace.Length / (Segments + 1);
        for (int at = 0; at < segment; at++) request(trace[at]);
        var percents = new double[Segments];
        for (int s = 0; s < Segments; s++)
        {
            int hits = 0, from = segment * (s + 1);
            for (int at = from; at < from + segment; at++) if (request(trace[at])) hits++;
            percents[s] = 100.0 * hits / segment;
        }
        return percents;
    }
}
