using System.Buffers;
using System.Diagnostics.Tracing;
using Manaloc.Buffers;

namespace Manaloc.Lab.Experiments;

/// <summary>
/// Memory given back when a service goes quiet: a burst of buffer rents (4 KiB, 64 KiB and 1 MiB, up to
/// 256 MiB at once), all returned, then nothing. Retained bytes over the idle time, for
/// <see cref="ArrayPool{T}.Shared"/> (from its event source's rent, return, drop and trim events) and for
/// Manaloc's <see cref="BufferManager"/> (its statistics) with a 0.5-2 s <see cref="BufferManagerOptions.ReleaseIdleAfter"/>,
/// each once without a GC and once with a full GC half a period into the idle time.
/// </summary>
public sealed class IdleRelease() : Experiment(
    "idle-release", "No article: a pool that trims only after gen-2 GCs keeps everything in a quiet service",
    "A burst of buffer rents (up to 256 MiB), then idle: retained bytes over time, ArrayPool.Shared vs BufferManager, with and without a GC.",
    [Shared, SharedGc, Manager, ManagerGc], Shared, quickSeconds: 5, quickLaunches: 2, sweepParameter: "idle")
{
    private const string Shared = "ArrayPool.Shared", SharedGc = "ArrayPool.Shared, GC while idle", Manager = "BufferManager", ManagerGc = "BufferManager, GC while idle";

    /// <summary>Samples per idle period.</summary>
    private const int SamplesPerPeriod = 4;

    /// <summary>Idle periods sampled: three, or in quick mode the two the target reads (a quick run's time is the whole suite's budget).</summary>
    private static int PeriodsSampled(RunSettings settings) => settings.Pick(3, 2, 3);


    /// <inheritdoc/>
    public override Claim Claim => new(
        "No figure: a pool that trims only after gen-2 GCs keeps what a burst left behind in a quiet service (\"the pool never gives memory back\")", null,
        new Metric("ArrayPool.Shared retained bytes after two idle periods, no GC, share of the burst's peak", Unit.Percent, f => ShareAfterTwoPeriods(f, Shared)));

    /// <inheritdoc/>
    public override IReadOnlyList<Target> Targets =>
    [
        Target.AtMost("BufferManager retained bytes after two idle periods, no GC, share of the burst's peak", Unit.Percent, f => ShareAfterTwoPeriods(f, Manager), 10),
    ];

    /// <inheritdoc/>
    public override Headline Headline => new(
        new Metric("BufferManager: retained bytes after two idle periods without a GC, share of the burst's peak", Unit.Percent, f => ShareAfterTwoPeriods(f, Manager)),
        new Metric("ArrayPool.Shared: the same share", Unit.Percent, f => ShareAfterTwoPeriods(f, Shared)),
        new Metric("ArrayPool.Shared with a GC while idle: the same share", Unit.Percent, f => ShareAfterTwoPeriods(f, SharedGc)),
        new Metric("BufferManager with a GC while idle: the same share", Unit.Percent, f => ShareAfterTwoPeriods(f, ManagerGc)));


    /// <summary>
    /// The idle period: the manager's ReleaseIdleAfter, and the unit of the time axis (a real clock: short, so the run stays
    /// short). The figures are in periods, so a quick run's quarter second reads as the full run's two seconds: each of the
    /// four variants sleeps through its sampled periods, which is most of the experiment's time.
    /// </summary>
    private static TimeSpan Period(RunSettings settings) => settings.Pick(TimeSpan.FromMilliseconds(100), TimeSpan.FromMilliseconds(250), TimeSpan.FromSeconds(2));

    /// <summary>The burst: buffers per size (1 MiB, 64 KiB, 4 KiB): 256 MiB at once in full mode, a quarter in quick mode, a 64th in smoke mode.</summary>
    private static (int Size, int Count)[] Burst(RunSettings settings)
    {
        int divisor = settings.Pick(64, 4, 1);
        return [(1 << 20, 192 / divisor), (64 << 10, 512 / divisor), (4 << 10, 8192 / divisor)];
    }

    /// <inheritdoc/>
    public override IReadOnlyList<ParameterSpec> DescribeParameters(RunSettings settings) =>
    [
        new("idle", "time since the burst's last return, in idle periods of " + Format.Value(Period(settings).TotalSeconds, Unit.Seconds),
            Enumerable.Range(0, SamplesPerPeriod * PeriodsSampled(settings) + 1).Select(i => PeriodsText(i)).ToArray()),
        new("burst", "buffers rented at once, then returned", Burst(settings).Select(b => $"{b.Count} × {Format.Value(b.Size, Unit.Bytes)}").ToArray()),
    ];

    /// <inheritdoc/>
    public override void Run(ExperimentContext context)
    {
        var settings = context.Settings;
        var period = Period(settings);
        var burst = Burst(settings);
        long burstBytes = burst.Sum(b => (long)b.Size * b.Count);
        context.Note($"Burst: {string.Join(", ", burst.Select(b => $"{b.Count} × {Format.Value(b.Size, Unit.Bytes)}"))} = {Format.Value(burstBytes, Unit.Bytes)} rented at once"
            + (settings.IsQuick && !settings.IsSmoke ? " (a quarter of the full run's 256 MiB, quick mode)" : settings.IsSmoke ? " (smoke mode)" : "")
            + $"; idle period {Format.Value(period.TotalSeconds, Unit.Seconds)} (BufferManagerOptions.ReleaseIdleAfter; ArrayPool.Shared has no such setting).");

        using (var probe = new ArrayPoolProbe(burst.Select(b => b.Size)))
        {
            foreach (bool gc in new[] { false, true })
            {
                var pool = ArrayPool<byte>.Shared;
                RunOne(context, gc ? SharedGc : Shared, gc, period, burst, pool.Rent, b => pool.Return(b), () => probe.RetainedBytes);
            }
        }
        foreach (bool gc in new[] { false, true })
        {
            // Created just before its burst, so the timer's first tick sees the burst and the second the idle time.
            using var manager = new BufferManager(new BufferManagerOptions { Name = "lab.idle-release", ReleaseIdleAfter = period });
            RunOne(context, gc ? ManagerGc : Manager, gc, period, burst, manager.Rent, b => manager.Return(b), () => manager.GetStatistics().RetainedBytes);
        }
    }

    /// <summary>One variant: the burst, then retained bytes every quarter period for <see cref="PeriodsSampled"/> periods (a full GC after the half-period sample when <paramref name="gc"/>).</summary>
    private static void RunOne(
        ExperimentContext context, string variant, bool gc, TimeSpan period, (int Size, int Count)[] burst,
        Func<int, byte[]> rent, Action<byte[]> giveBack, Func<long> retained)
    {
        context.Status($"{variant}: burst");
        var held = new List<byte[]>();
        foreach (var (size, count) in burst)
        {
            for (int i = 0; i < count; i++)
            {
                var buffer = rent(size);
                buffer[0] = 1; // touched, as a real user would
                held.Add(buffer);
            }
        }
        foreach (var buffer in held) giveBack(buffer);
        held.Clear();

        var clock = TimeProvider.System;
        long start = clock.GetTimestamp();
        int gen2Before = GC.CollectionCount(2);
        for (int sample = 0; sample <= SamplesPerPeriod * PeriodsSampled(context.Settings); sample++)
        {
            var due = period * sample / SamplesPerPeriod;
            var wait = due - clock.GetElapsedTime(start);
            if (wait > TimeSpan.Zero) Thread.Sleep(wait);
            context.Cancellation.ThrowIfCancellationRequested();
            context.Status($"{variant}: idle {PeriodsText(sample)} periods");
            context.RecordSamples(variant, Unit.Bytes, [retained()], Parameters.Of(("idle", Periods(sample))));
            if (gc && sample == SamplesPerPeriod / 2)
            {
                GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
                GC.WaitForPendingFinalizers(); // both pools trim from a gen-2 finalizer callback
            }
        }
        int gen2 = GC.CollectionCount(2) - gen2Before;
        context.Note($"{variant}: {Format.Count(gen2, "gen-2 GC")} during the idle time{(gc ? " (one induced)" : "")}.");
    }

    private static double Periods(int sample) => sample / (double)SamplesPerPeriod;

    private static string PeriodsText(int sample) => Periods(sample).ToString("0.##", CultureInfo.InvariantCulture);

    /// <summary>Retained bytes two periods into the idle time as a percentage of the first sample's (the burst's peak).</summary>
    private static double? ShareAfterTwoPeriods(Figures f, string variant)
    {
        double? peak = f.Median(variant, m => m.Parameters.Is("idle", Periods(0)));
        double? after = f.Median(variant, m => m.Parameters.Is("idle", Periods(2 * SamplesPerPeriod)));
        return peak is > 0 && after is { } a ? 100 * a / peak.Value : null;
    }

    /// <summary>
    /// What <see cref="ArrayPool{T}.Shared"/> (of bytes) holds in the burst's sizes, from its event source: a
    /// return adds, a drop, a trim and a rent that did not allocate subtract. Events arrive synchronously on
    /// the thread that raises them, so the figure is exact once the pool is quiet.
    /// </summary>
    private sealed class ArrayPoolProbe(IEnumerable<int> sizes) : EventListener
    {
        private readonly HashSet<int> _sizes = [.. sizes];
        private readonly int _poolId = ArrayPool<byte>.Shared.GetHashCode(); // the pool's id in its events
        private long _retained;

        public long RetainedBytes => Interlocked.Read(ref _retained);

        protected override void OnEventSourceCreated(EventSource eventSource)
        {
            if (eventSource.Name == "System.Buffers.ArrayPoolEventSource") EnableEvents(eventSource, EventLevel.Verbose);
        }

        protected override void OnEventWritten(EventWrittenEventArgs eventData)
        {
            if (eventData.Payload is null || eventData.PayloadNames is null) return;
            int sign = eventData.EventName switch
            {
                "BufferReturned" or "BufferAllocated" => 1,
                "BufferRented" or "BufferDropped" or "BufferTrimmed" => -1,
                _ => 0,
            };
            if (sign == 0) return;
            int size = Convert.ToInt32(eventData.Payload[eventData.PayloadNames.IndexOf("bufferSize")], CultureInfo.InvariantCulture);
            int pool = Convert.ToInt32(eventData.Payload[eventData.PayloadNames.IndexOf("poolId")], CultureInfo.InvariantCulture);
            if (pool != _poolId || !_sizes.Contains(size)) return;
            Interlocked.Add(ref _retained, sign * (long)size);
        }
    }
}
