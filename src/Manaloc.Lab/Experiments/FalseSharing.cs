using Manaloc.Lab.Harness;
using Manaloc.Threading;

namespace Manaloc.Lab.Experiments;

/// <summary>
/// Seed 000, "Hot/Cold Data Separation Considered Harmful in Multithreaded Environments": packing
/// frequently written fields into one cache line is good for a single thread and bad for many,
/// because every write invalidates the line in the other cores (false sharing); padding them apart
/// fixes it. N threads each increment their own counter: counters packed in one array, padded
/// (<see cref="Padded{T}"/>), one shared <see cref="StripedCounter"/>, and one shared Interlocked counter.
/// </summary>
public sealed class FalseSharing : Experiment
{
    private const string Packed = "packed long[]";
    private const string PaddedCells = "Padded<long>[]";
    private const string Striped = "StripedCounter";
    private const string Shared = "shared Interlocked";

    /// <inheritdoc/>
    public override string Name => "false-sharing";
    /// <inheritdoc/>
    public override string Article => "Hot/Cold Data Separation Considered Harmful in Multithreaded Environments (seed 000)";
    /// <inheritdoc/>
    public override string Description => "N threads increment their own counter: packed in one cache line, padded, a StripedCounter, one shared Interlocked counter.";
    /// <inheritdoc/>
    public override ArticleFigure Figure => new("Frequently written fields sharing a cache line scale badly across processors; padding them apart restores locality (no figure given).");
    /// <inheritdoc/>
    public override IReadOnlyList<string> Variants { get; } = [Packed, PaddedCells, Striped, Shared];
    /// <inheritdoc/>
    public override string Baseline => Packed;
    /// <inheritdoc/>
    public override string? SweepParameter => "threads";
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
            context.Note($"The machine was busy (1-minute load average {load:0.#} on {Environment.ProcessorCount} processors): the measuring threads often did not run at the same time, which hides false sharing; rerun on a quiet machine for a fair figure.");
        }
        context.Note($"Packed and padded counters are each written by one thread (a plain volatile load and store); StripedCounter and the shared counter take atomic increments from every thread. {Environment.ProcessorCount} processors: thread counts above it time-share cores, where false sharing fades.");
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

    /// <inheritdoc/>
    public override VerdictResult Judge(IReadOnlyList<Measurement> measurements)
    {
        int threads = measurements.Where(m => m.Threads >= 2 && m.Threads <= Math.Max(2, Environment.ProcessorCount)).Select(m => m.Threads).DefaultIfEmpty(0).Max();
        var packed = measurements.FirstOrDefault(m => m.Variant == Packed && m.Threads == threads);
        var padded = measurements.FirstOrDefault(m => m.Variant == PaddedCells && m.Threads == threads);
        var striped = measurements.FirstOrDefault(m => m.Variant == Striped && m.Threads == threads);
        var shared = measurements.FirstOrDefault(m => m.Variant == Shared && m.Threads == threads);
        if (packed is null || padded is null)
        {
            return new(Verdict.NotComparable, "No measurement with two or more threads.");
        }
        double ratio = packed.Statistics.Median / padded.Statistics.Median;
        var verdict = ratio >= 1.5 ? Verdict.Holds : ratio >= 0.9 ? Verdict.Shrinks : Verdict.Reversed;
        string more = striped is null || shared is null ? "" :
            $"; StripedCounter {Format.Value(striped.Statistics.Median, "ns/op")} vs shared Interlocked {Format.Value(shared.Statistics.Median, "ns/op")} ({Format.Ratio(shared.Statistics.Median / striped.Statistics.Median)})";
        return new(verdict,
            $"at {threads} threads, padded counters are {Format.Ratio(ratio)} faster than packed ({Format.Value(packed.Statistics.Median, "ns/op")} → {Format.Value(padded.Statistics.Median, "ns/op")}){more}.",
            ratio, "x");
    }
}
