using System.Collections.Concurrent;
using Manaloc.Threading;

namespace Manaloc.Lab.Experiments;

/// <summary>
/// Seed 000, "Reducing AutoResetEvent's Synchronization Overhead": 1,000,000 Set+WaitOne pairs on
/// one thread took 1035 ms with AutoResetEvent and 9 ms with an event that tracks its own state.
/// Today: the same loop with AutoResetEvent, ManualResetEventSlim, SemaphoreSlim and
/// EconomicResetEvent, then a two-thread ping-pong and a producer/consumer over a queue.
/// </summary>
public sealed partial class ResetEvent() : Experiment(
    "reset-event", "Reducing AutoResetEvent's Synchronization Overhead (seed 000)",
    "Set+Wait on one thread, a two-thread ping-pong and a producer/consumer queue, per event type.",
    [Are, Mres, Semaphore, Economic], Are, quickSeconds: 7)
{
    private const string Are = "AutoResetEvent", Mres = "ManualResetEventSlim", Semaphore = "SemaphoreSlim", Economic = "EconomicResetEvent";
    private const string SetWait = "set-wait", PingPong = "ping-pong", ProducerConsumer = "producer-consumer";

    /// <inheritdoc/>
    public override Claim Claim => new(
        "1,000,000 Set+WaitOne pairs on one thread: AutoResetEvent 1035 ms → EconomicResetEvent 9 ms", 1035.0 / 9,
        Metric.TimesBetter("EconomicResetEvent vs AutoResetEvent, Set+Wait on one thread", Economic, Are, In(SetWait)));
    /// <inheritdoc/>
    public override IReadOnlyList<Target> Targets =>
    [
        Target.AtLeast(Metric.TimesBetter("Set+Wait on one thread vs AutoResetEvent", Economic, Are, In(SetWait)), 20),
        Target.AtLeast(Metric.TimesBetter("Set+Wait on one thread vs SemaphoreSlim", Economic, Semaphore, In(SetWait)), 1.5),
        Target.AtLeast("two-thread ping-pong vs the fastest other event", Unit.Ratio, f =>
            new[] { Are, Mres, Semaphore }.Select(v => f.Median(v, In(PingPong))).Min() / f.Median(Economic, In(PingPong)), 1),
    ];
    /// <inheritdoc/>
    public override Headline Headline => new(
        Metric.TimesBetter("EconomicResetEvent vs SemaphoreSlim, two-thread ping-pong (times as fast)", Economic, Semaphore, In(PingPong)),
        Metric.TimesBetter("vs ManualResetEventSlim, ping-pong", Economic, Mres, In(PingPong)),
        Metric.TimesBetter("vs AutoResetEvent, Set+Wait on one thread", Economic, Are, In(SetWait)));

    /// <inheritdoc/>
    public override IReadOnlyList<ParameterSpec> DescribeParameters(RunSettings settings) =>
    [
        new("scenario", "set-wait: Set then Wait on one thread (the article's loop); ping-pong: two threads hand a turn back and forth (ns per hand-off); producer-consumer: one thread enqueues and sets, the other drains and waits (ns per item)",
            [SetWait, PingPong, ProducerConsumer]),
    ];

    /// <inheritdoc/>
    public override void Run(ExperimentContext context)
    {
        var setWait = Parameters.Of(("scenario", SetWait));
        using (var are = new AutoResetEvent(false))
        using (var mres = new ManualResetEventSlim(false))
        using (var sem = new SemaphoreSlim(0))
        using (var econ = new EconomicResetEvent())
        {
            context.Compare(
            [
                (Are, n => { for (long i = 0; i < n; i++) { are.Set(); are.WaitOne(); } }),
                (Mres, n => { for (long i = 0; i < n; i++) { mres.Set(); mres.Wait(); mres.Reset(); } }),
                (Semaphore, n => { for (long i = 0; i < n; i++) { sem.Release(); sem.Wait(); } }),
                (Economic, n => { for (long i = 0; i < n; i++) { econ.Set(); econ.Wait(); } }),
            ], setWait);
        }

        MeasurePingPong(context);

        foreach (var variant in Variants)
        {
            using var signal = Signal.Create(variant);
            var queue = new ConcurrentQueue<long>();
            long sink = 0;
            Action<int, long> body = (t, n) =>
            {
                if (t == 0)
                {
                    for (long i = 0; i < n; i++) { queue.Enqueue(i); signal.Set(); }
                    return;
                }
                for (long got = 0; got < n;)
                {
                    if (signal.CountsSets) signal.Wait(); // a semaphore's count is the item count: one wait per item
                    if (queue.TryDequeue(out long item)) { sink += item; got++; }
                    else if (!signal.CountsSets) signal.WaitForMore(queue);
                }
            };
            context.MeasureThreads(variant, 2, body, Parameters.Of(("scenario", ProducerConsumer)), PilotTotal(body, context.Settings));
            GC.KeepAlive(sink);
        }
        context.Note("ping-pong: ns per hand-off (two per round trip); producer-consumer: ns per item, both threads together. Ratios are to AutoResetEvent in the same scenario. Two-thread operation counts come from a pilot run, not the harness's calibration.");
        context.Note("ping-pong is bimodal on a busy machine: while both threads have a core a hand-off takes ~50-300 ns for every spinning event; when the scheduler puts them on one core (or the partner is preempted) each hand-off costs a context switch, ~5 µs, whichever event is used. Its samples are therefore taken in rounds, one per event per round in a balanced order with fresh events, so outside load falls on all four alike.");
    }

    /// <summary>
    /// The ping-pong in rounds (<see cref="Rounds"/>): one sample of every event per round, in a balanced
    /// order, with fresh events every round. The hand-off is bimodal on a shared 2-vCPU machine (both
    /// threads on a core: tens of ns; one descheduled: microseconds), and a burst of outside load lasting
    /// one variant's samples decided the comparison when each variant took all its samples in a row
    /// (one run: EconomicResetEvent 256 ns beside ManualResetEventSlim 82 ns, 62 against 82 in the runs
    /// around it). A first round, not recorded, warms the JIT and sizes each event's sample.
    /// </summary>
    private void MeasurePingPong(ExperimentContext context)
    {
        var settings = context.Settings;
        var perRound = context.IsSmoke ? settings with { Samples = 1 }
            : context.IsQuick ? settings with { WarmUp = TimeSpan.FromMilliseconds(20), Samples = 1 }
            : settings with { WarmUp = TimeSpan.FromMilliseconds(50), Samples = 1 };
        // Whole Williams cycles (4 variants: every variant in every position once per 4 rounds).
        int rounds = context.IsSmoke ? 1 : Rounds.PerLaunch(context.Settings, context.IsQuick ? 8 : 16, Variants.Count); // the launches' rounds pool
        var parameters = Parameters.Of(("scenario", PingPong));
        var totals = new long[Variants.Count];
        // One sample on fresh events; the first call per event (round -1, not recorded) also sizes its sample from a pilot.
        Measurement Once(int v, int round)
        {
            context.Cancellation.ThrowIfCancellationRequested();
            context.Status($"{Variants[v]} ping-pong, round {round + 1} of {rounds}");
            using var pair = Signal.Create(Variants[v]);
            using var back = Signal.Create(Variants[v]);
            Action<int, long> body = (t, n) =>
            {
                for (long i = 0; i < n; i++)
                {
                    if (t == 0) { pair.Set(); back.Wait(); }
                    else { pair.Wait(); back.Set(); }
                }
            };
            if (round >= 0) return ThreadSweep.Measure(Variants[v], 2, body, perRound, parameters, totals[v]);
            totals[v] = PilotTotal(body, settings);
            return ThreadSweep.Measure(Variants[v], 2, body, settings with { Samples = 1 }, parameters, totals[v]); // JIT warm-up
        }
        for (int v = 0; v < Variants.Count; v++) _ = Once(v, round: -1);
        foreach (var m in Rounds.Interleave(Variants.Count, rounds, context.Cancellation, Once)) context.Record(m);
    }

    /// <summary>
    /// The total operation count for a two-thread measurement, from a pilot on two threads that
    /// start together from a gate (at least 1,024 operations each, grown until a run takes 2 ms,
    /// then the best of two runs). The harness's own calibration can settle, after one descheduled
    /// round on a loaded machine, on a few operations per sample that then time its start barrier
    /// rather than the hand-off.
    /// </summary>
    private static long PilotTotal(Action<int, long> body, RunSettings settings)
    {
        double nsPerOp = Pilot.NsPerOp(2, body, startPerThread: 1024, minimum: TimeSpan.FromMilliseconds(2));
        return Math.Max(2, 2 * (Pilot.OperationsPerSample(settings, nsPerOp) / 2));
    }

    private static Func<Measurement, bool> In(string scenario) => m => m.Parameters.Is("scenario", scenario);
}
