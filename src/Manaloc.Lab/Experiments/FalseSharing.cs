using Manaloc.Threading;

namespace Manaloc.Lab.Experiments;

/// <summary>
/// Seed 000, "Hot/Cold Data Separation Considered Harmful in Multithreaded Environments": packing
/// frequently written fields into one cache line is good for a single thread and bad for many,
/// because every write invalidates the line in the other cores (false sharing); padding them apart
/// fixes it. N threads each increment their own counter: counters packed in one array, padded
/// (<see cref="Padded{T}"/>), one shared <see cref="StripedCounter"/>, and one shared Interlocked counter.
/// </summary>
public sealed class FalseSharing() : Experiment(
    "false-sharing", "Hot/Cold Data Separation Considered Harmful in Multithreaded Environments (seed 000)",
    "N threads increment their own counter: packed in one cache line, padded, a StripedCounter, one shared Interlocked counter.",
    [Packed, PaddedCells, Striped, Shared], Packed, quickSeconds: 6, sweepParameter: "threads")
{
    private const string Packed = "packed long[]", PaddedCells = "Padded<long>[]", Striped = "StripedCounter", Shared = "shared Interlocked";

    /// <inheritdoc/>
    public override Claim Claim => new(
        "Frequently written fields sharing a cache line scale badly across processors; padding them apart restores locality (no figure given).", null,
        new Metric("padded vs packed counters, most threads up to the processor count", Unit.Ratio, f => f.TimesBetter(PaddedCells, Packed, AtContendedThreads(f.All))));
    /// <inheritdoc/>
    public override IReadOnlyList<Target> Targets =>
    [
        Target.AtLeast("StripedCounter vs shared Interlocked, most threads up to the processor count", Unit.Ratio, f => f.TimesBetter(Striped, Shared, AtContendedThreads(f.All)), 1),
    ];

    /// <summary>The largest thread count from 2 up to the processor count that was measured: where sharing a line costs most without oversubscription.</summary>
    private static Func<Measurement, bool> AtContendedThreads(IEnumerable<Measurement> all)
    {
        int threads = all.Where(m => m.Threads >= 2 && m.Threads <= Math.Max(2, Environment.ProcessorCount)).Select(m => m.Threads).DefaultIfEmpty(0).Max();
        return m => m.Threads == threads;
    }
    /// <inheritdoc/>
    public override Headline Headline => new(
        new Metric("StripedCounter vs one shared Interlocked counter, most threads up to the processor count (times as fast)", Unit.Ratio, f => f.TimesBetter(Striped, Shared, AtContendedThreads(f.All))),
        new Metric("Padded<long>[] vs a packed long[] (times as fast)", Unit.Ratio, f => f.TimesBetter(PaddedCells, Packed, AtContendedThreads(f.All))));
    /// <inheritdoc/>
    public override IReadOnlyList<ParameterSpec> DescribeParameters(RunSettings settings) =>
    [
        new("threads", "threads incrementing at once", settings.ThreadCounts.Select(t => t.ToString(System.Globalization.CultureInfo.InvariantCulture)).ToArray()),
    ];

    /// <inheritdoc/>
    public override void Run(ExperimentContext context)
    {
        foreach (int threads in context.ThreadCounts)
        {
            var packed = new long[threads];
            context.MeasureThreads(Packed, threads, (t, n) =>
            {
                ref long mine = ref packed[t];
                // Volatile: one real load and store per increment, as a field written by a hot loop would be.
                for (long i = 0; i < n; i++) Volatile.Write(ref mine, Volatile.Read(ref mine) + 1);
            });
            var padded = new Padded<long>[threads];
            context.MeasureThreads(PaddedCells, threads, (t, n) =>
            {
                ref long mine = ref padded[t].Value;
                for (long i = 0; i < n; i++) Volatile.Write(ref mine, Volatile.Read(ref mine) + 1);
            });
            var striped = new StripedCounter();
            context.MeasureThreads(Striped, threads, (_, n) =>
            {
                for (long i = 0; i < n; i++) striped.Increment();
            });
            var shared = new long[1];
            context.MeasureThreads(Shared, threads, (_, n) =>
            {
                for (long i = 0; i < n; i++) Interlocked.Increment(ref shared[0]);
            });
        }
        if (LoadAverage() is double load && load > Environment.ProcessorCount)
        {
            context.Note($"The machine was busy (1-minute load average {load:0.#} on {Format.Count(Environment.ProcessorCount, "processor")}): the measuring threads often did not run at the same time, which hides false sharing; rerun on a quiet machine for a fair figure.");
        }
        context.Note($"Packed and padded counters are each written by one thread (a plain volatile load and store); StripedCounter and the shared counter take atomic increments from every thread. {Format.Count(Environment.ProcessorCount, "processor")}: thread counts above it time-share cores, where false sharing fades.");
    }

    private static double? LoadAverage()
    {
        try
        {
            if (!OperatingSystem.IsLinux() || !File.Exists("/proc/loadavg")) return null;
            string first = File.ReadAllText("/proc/loadavg").Split(' ')[0];
            return double.TryParse(first, System.Globalization.NumberStyles.Float, System.Globalization.CultureInfo.InvariantCulture, out double load) ? load : null;
        }
        catch (IOException)
        {
            return null;
        }
    }
}
