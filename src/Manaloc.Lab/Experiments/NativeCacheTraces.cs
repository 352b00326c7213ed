using System.Buffers;
using System.Collections.Concurrent;
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
/// caller does. Nothing here is timed and a hit ratio does not depend on the machine's load, so the replays run in the
/// experiment's process while a child is in an untimed window (<see cref="Replays"/>), on the cores that child's fill and
/// settling collections leave idle, and are parked before that child times anything.
/// </summary>
/// <remarks>
/// A hit ratio depends on where each key's hash puts it in a cache's frequency sketch, and both caches seed their hashes
/// per process (NativeCache's seed, .NET's string hashing under ConcurrentLfu), so one replay is one draw of that
/// placement, and a ratio near 1 may land on either side of it by chance. So each trace is replayed in <see cref="Replicas(RunSettings, string)"/> independent
/// replicas, each with its own trace seed and its own key salt (other letters in every key, so every hash in both caches
/// is drawn anew), and each replica's NativeCache ÷ ConcurrentLfu ratio, paired on the same trace and keys, is a sample:
/// the target's interval is the bootstrap over replicas, the spread the seeds really cause.
/// </remarks>
internal static class NativeCacheTraces
{
    public const string Zipf = "zipf-0.9";
    public const string Scan = "zipf-0.9-with-scans";
    public const string Loop = "loop";

    /// <summary>The traces in display order.</summary>
    public static readonly IReadOnlyList<string> All = [Zipf, Scan, Loop];

    /// <summary>ConcurrentLfu's capacity: NativeCache's held entries, or the budget ÷ the mean entry.</summary>
    public const string Matched = "entries NativeCache holds", ByBytes = "budget ÷ mean entry";

    /// <summary>The op of the paired ratios: per replica, NativeCache's hit ratio ÷ ConcurrentLfu's on the same trace and keys.</summary>
    public const string PairedOp = "hit-ratio-vs-lfu";

    /// <summary>The Zipf traces' exponent.</summary>
    public const double Theta = 0.9;

    /// <summary>A Zipf trace's length in working sets: the first fills the cache, the rest are measured. A replica's paired
    /// ratio spreads as much over five working sets as over nine (its spread is the hash placement's, not the trace's
    /// length), so the requests go to more replicas instead.</summary>
    public const int Rounds = 5;

    /// <summary>The loop trace's length in working sets (about fifteen passes of the loop): its ratio stands far above the
    /// target replica by replica, and the loop's pattern repeats every pass, so fewer passes measure it as well.</summary>
    public const int LoopRounds = 3;

    /// <summary>Distinct keys of the Zipf traces.</summary>
    public static int WorkingSet(RunSettings s) => s.Pick(smoke: 4_000, quick: 16_000, full: 200_000);

    /// <summary>
    /// Independent replicas of a trace (trace seed and key salt drawn anew): the samples of its hit ratios; replica r runs
    /// every trace whose count is above r. Quick mode's paired ratios sit within thousandths of 1 on the Zipf trace, a
    /// replica now and then below it: sixteen, so the median's interval decides; the scan trace's stand further above 1
    /// and the loop's hundredths: eight. ConcurrentLfu at the budget ÷ mean entry (read by no target, shown beside) runs
    /// in the first <see cref="ByBytesReplicas"/> only.
    /// </summary>
    public static int Replicas(RunSettings s, string trace) => trace == Zipf ? Replicas(s) : s.Pick(smoke: 2, quick: 8, full: 3);

    /// <summary>The most replicas of any trace (the Zipf trace's).</summary>
    public static int Replicas(RunSettings s) => s.Pick(smoke: 2, quick: 16, full: 3);

    /// <summary>Replicas of ConcurrentLfu at the budget ÷ mean entry on every trace: a figure shown, read by no target.</summary>
    public static int ByBytesReplicas(RunSettings s) => s.Pick(smoke: 2, quick: 3, full: 3);

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

    /// <summary>Replays the three traces in every replica now and records them (<see cref="Describe"/> says how).</summary>
    public static void Run(ExperimentContext context)
    {
        using var replays = new Replays(context.Settings, context.Cancellation);
        replays.Record(context);
    }

    /// <summary>
    /// Every replica's replays as untimed work (<see cref="UntimedWork"/>): the experiment's process runs them while a
    /// child is in an untimed window (its fill, its settling collection, its inputs' set-up), on the cores that work leaves
    /// idle, and <see cref="Record"/> runs what is left once the children are done. The replicas are independent and
    /// untimed (a hit ratio does not depend on the machine's speed or load), so they run side by side, one thread a core,
    /// each writing its own slot, handed out one at a time in replica order, which is heaviest first (the first replicas
    /// also run the scan, the loop and ConcurrentLfu at the budget ÷ mean entry), so no core is left with the heavy ones.
    /// </summary>
    public sealed class Replays : IDisposable
    {
        private readonly Dictionary<(string Trace, string Cache), Replay>[] _perReplica;
        private readonly long _budget;

        /// <summary>Prepares the replays; none runs until <see cref="Work"/> is opened.</summary>
        public Replays(RunSettings settings, CancellationToken cancellation)
        {
            int workingSet = WorkingSet(settings), replicas = Replicas(settings);
            _budget = Budget(workingSet);
            _perReplica = new Dictionary<(string Trace, string Cache), Replay>[replicas];
            long budget = _budget;
            Work = new UntimedWork(replicas, (replica, checkpoint) => _perReplica[replica] = ReplayReplica(settings, replica, workingSet, budget, checkpoint, cancellation),
                Environment.ProcessorCount, cancellation);
        }

        /// <summary>The replays as work to run in a child's untimed windows.</summary>
        public UntimedWork Work { get; }

        /// <summary>Runs the replays not yet done and records every cache's hit ratio and the paired ratios.</summary>
        public void Record(ExperimentContext context)
        {
            context.Status($"hit ratios, {_perReplica.Length} replicas");
            Work.Finish();
            // A stopped run leaves replicas undone: nothing to record.
            context.Cancellation.ThrowIfCancellationRequested();
            NativeCacheTraces.Record(context, _perReplica, _budget);
        }

        /// <inheritdoc/>
        public void Dispose() => Work.Dispose();
    }

    private static void Record(ExperimentContext context, Dictionary<(string Trace, string Cache), Replay>[] perReplica, long budget)
    {
        var results = new Dictionary<(string Trace, string Cache), List<Replay>>();
        foreach (var replica in perReplica)
        {
            foreach (var (key, replay) in replica)
            {
                if (!results.TryGetValue(key, out var list)) results[key] = list = [];
                list.Add(replay);
            }
        }
        foreach (string trace in All)
        {
            var p = Parameters.Of(("op", "hit-ratio"), ("trace", trace));
            var native = results[(trace, CacheSubjects.Native)];
            Record(context, CacheSubjects.Native, p, native, budget);
            foreach (string capacity in new[] { Matched, ByBytes })
            {
                var lfu = results[(trace, capacity)];
                Record(context, CacheSubjects.Lfu, p.With("capacity", capacity), lfu, budget);
                // Paired: replica r's NativeCache against replica r's ConcurrentLfu (same trace, same keys), in the replicas both ran.
                context.RecordSamples(CacheSubjects.Native, Unit.Ratio, [.. lfu.Select((l, r) => native[r].HitPercent / l.HitPercent)],
                    Parameters.Of(("op", PairedOp), ("trace", trace), ("capacity", capacity)), lowerIsBetter: false);
            }
        }
    }

    /// <summary>Notes how <see cref="Run"/> replays the traces.</summary>
    public static void Describe(ExperimentContext context)
    {
        int workingSet = WorkingSet(context.Settings), replicas = Replicas(context.Settings), byBytes = ByBytesReplicas(context.Settings);
        long budget = Budget(workingSet);
        context.Note($"Hit ratios: a working set of {workingSet:N0} keys, a budget of a quarter of its key and value bytes ({Format.Value(budget, "bytes")}); Zipf traces of {workingSet * Rounds:N0} requests, "
            + $"{Rounds} working sets' worth, the loop of {workingSet * LoopRounds:N0} ({LoopRounds}), the first working set's worth filling the cache, the rest measured. Zipf θ = {Theta}; the scans are one pass over a cache's worth of fresh keys after every working set's worth of Zipf requests; "
            + "the loop is a tenth longer than NativeCache's held entries. ConcurrentLfu runs its maintenance in the caller (ForegroundScheduler), so no read is dropped and each replay is deterministic. "
            + $"The Zipf trace in {replicas} replicas, the others in {Replicas(context.Settings, Scan)} (ConcurrentLfu at {ByBytes} in the first {byBytes}), "
            + "each with its own trace seed and key salt (every hash in both caches drawn anew): the samples are the replicas, "
            + "and the targets read the paired ratio (replica by replica, NativeCache ÷ ConcurrentLfu on the same trace and keys). "
            + "The replays run in the experiment's own process only while a cache's child is in an untimed phase (its fill, its settling collection, its keys' set-up), parked before that child times anything; what is left runs after the children.");
    }

    private readonly record struct Replay(double HitPercent, long Held, int Capacity);

    /// <summary>Replica <paramref name="replica"/>'s replays of every trace it runs (see <see cref="Replicas(RunSettings, string)"/>), by trace and cache.</summary>
    private static Dictionary<(string Trace, string Cache), Replay> ReplayReplica(RunSettings settings, int replica, int workingSet, long budget, Action checkpoint, CancellationToken cancellation)
    {
        int length = workingSet * Rounds;
        // Replica r: its own trace seeds and its own key salt (odd multiples of the golden ratio: no two alike, none zero).
        ulong salt = (ulong)(2 * replica + 1) * 0x9E3779B97F4A7C15UL;
        var scan = replica < Replicas(settings, Scan) ? ScanTrace(workingSet, length, seed: 8 + 100 * replica) : [];
        // The largest index a trace uses: the scan trace's fresh keys.
        var keys = NativeCacheWorkload.KeyStrings(Math.Max(scan.Length > 0 ? scan.Max() : 0, workingSet * 2) + 1, salt);
        var traces = new Dictionary<string, int[]>
        {
            [Zipf] = NativeCacheWorkload.ZipfTrace(workingSet, length, seed: 7 + 100 * replica, Theta),
            [Scan] = scan,
        };
        var results = new Dictionary<(string Trace, string Cache), Replay>();
        long held = 0;
        // The Zipf trace first: every replica runs it (it has the most), and the loop's length follows from what it held.
        foreach (string trace in All)
        {
            cancellation.ThrowIfCancellationRequested();
            checkpoint();
            if (replica >= Replicas(settings, trace)) continue;
            // The loop is slightly larger than the cache: a tenth more keys than NativeCache held on the Zipf trace.
            var replay = trace == Loop ? LoopTrace((int)Math.Min(keys.Length, held * 11 / 10), workingSet * LoopRounds) : traces[trace];
            var native = ReplayNative(keys, replay, budget, workingSet, checkpoint);
            if (trace == Zipf) held = native.Held;
            results[(trace, CacheSubjects.Native)] = native;
            results[(trace, Matched)] = ReplayLfu(keys, replay, (int)Math.Max(1, native.Held), workingSet, checkpoint);
            if (replica < ByBytesReplicas(settings)) results[(trace, ByBytes)] = ReplayLfu(keys, replay, CacheSubjects.CapacityFor(budget), workingSet, checkpoint);
        }
        return results;
    }

    private static void Record(ExperimentContext context, string variant, Parameters p, List<Replay> replays, long budget)
        => context.RecordSamples(variant, Unit.Percent, [.. replays.Select(r => r.HitPercent)], p, lowerIsBetter: false, metrics: new Dictionary<string, double>
        {
            ["entriesHeld"] = replays.Average(r => r.Held),
            ["capacity"] = replays.Average(r => r.Capacity),
            ["budgetBytes"] = budget,
        });

    private static Replay ReplayNative(string[] keys, int[] trace, long budget, int fill, Action checkpoint)
    {
        using var cache = new Cache(CacheSubjects.NativeOptions(budget));
        var writer = new ArrayBufferWriter<byte>(NativeCacheWorkload.MaxValueBytes);
        double hits = Measured(trace, fill, checkpoint, index =>
        {
            writer.ResetWrittenCount();
            if (cache.TryGet(keys[index].AsSpan(), writer)) return true;
            cache.Set(keys[index].AsSpan(), NativeCacheWorkload.Value(index));
            return false;
        });
        return new Replay(hits, cache.Count, 0);
    }

    /// <summary>What every ConcurrentLfu entry of a replay holds. ConcurrentLfu bounds its entries by count, so its hit ratio
    /// depends on the keys alone: one shared value instead of a copy per stored entry, which made the replays allocate
    /// (and collect) an array per miss, more than a million in a quick run.</summary>
    private static readonly byte[] LfuValue = new byte[NativeCacheWorkload.MinValueBytes];

    private static Replay ReplayLfu(string[] keys, int[] trace, int capacity, int fill, Action checkpoint)
    {
        var cache = new ConcurrentLfu<string, byte[]>(1, Math.Max(capacity, 3), new ForegroundScheduler(), StringComparer.Ordinal);
        double hits = Measured(trace, fill, checkpoint, index =>
        {
            if (cache.TryGet(keys[index], out _)) return true;
            cache.AddOrUpdate(keys[index], LfuValue);
            return false;
        });
        return new Replay(hits, cache.Count, capacity);
    }

    /// <summary>Requests between two of the replay's pause points (<see cref="UntimedWork.Checkpoint"/>): a few tens of
    /// microseconds of requests, so a child waiting to time something waits no longer.</summary>
    private const int RequestsPerCheckpoint = 256;

    /// <summary>The hit percentage of <paramref name="trace"/> after its first <paramref name="fill"/> requests (a working set's worth, which fills the cache).</summary>
    private static double Measured(int[] trace, int fill, Action checkpoint, Func<int, bool> request)
    {
        long hits = 0;
        for (int at = 0; at < trace.Length; at++)
        {
            if (at % RequestsPerCheckpoint == 0) checkpoint();
            if (request(trace[at]) && at >= fill) hits++;
        }
        return 100.0 * hits / (trace.Length - fill);
    }
}
