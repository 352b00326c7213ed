using System.Buffers;
using System.IO.Pipelines;
using Manaloc.Buffers;
using Manaloc.Lab.Subjects;

namespace Manaloc.Lab.Experiments;

/// <summary>
/// A <see cref="Pipe"/> moves data from a writer thread to a reader thread in segments of 4 KiB and 64 KiB, over
/// <see cref="MemoryPool{T}.Shared"/> (an owner object allocated per segment, arrays from ArrayPool.Shared) and over
/// Manaloc's <see cref="BufferMemoryPool"/> (pooled owners, arrays from a BufferManager): throughput, bytes allocated
/// per segment, and GCs.
/// </summary>
/// <remarks>
/// Throughput: interleaved samples (the harness's Compare) of n segments written, each filled, flushed, and read
/// by the reader thread (a sample ends when the reader has consumed all of it); bytes per segment there are the writer
/// thread's, where every rent happens. Then, untimed, after a 16 MiB warm-up move, one long move per variant (1 GiB;
/// less in quick mode, and the note says how much) counts the bytes the writer thread allocated (every rent, so every array or owner a pool must
/// create, is there; counting all threads would add the lab's own display) and the process's GCs.
/// </remarks>
public sealed class Pipelines() : Experiment(
    "pipelines", "Manaloc's own claim: a MemoryPool<byte> for System.IO.Pipelines and Kestrel",
    "A Pipe moves data writer thread → reader thread in 4 KiB and 64 KiB segments: MemoryPool<byte>.Shared vs BufferMemoryPool (throughput, bytes per segment, GCs).",
    [Shared, Pool], Shared, quickSeconds: 2, quickLaunches: 2, sweepParameter: "segment")
{
    private const string Shared = "MemoryPool.Shared";
    private const string Pool = "BufferMemoryPool";
    private static readonly int[] SegmentSizes = [4096, 65536];
    private const long WarmUpBytes = 16L << 20;

    /// <inheritdoc/>
    public override Claim Claim => new("No figure: pooling the owner objects as well as the arrays lets a Pipe move data without allocating per segment, at no cost in throughput", null,
        Metric.TimesBetter("BufferMemoryPool vs MemoryPool.Shared, Pipe throughput, 4 KiB segments", Pool, Shared, m => IsTimed(m, 4096)));
    /// <inheritdoc/>
    public override IReadOnlyList<Target> Targets =>
    [
        .. SegmentSizes.SelectMany(size => new[]
        {
            Target.AtLeast(Metric.TimesBetter($"BufferMemoryPool vs MemoryPool.Shared throughput, {size / 1024} KiB segments", Pool, Shared, m => IsTimed(m, size)), 1),
            Target.AtMost($"BufferMemoryPool bytes allocated per segment (writer thread), {size / 1024} KiB", Unit.BytesPerOp,
                f => f.Value(Pool, m => m.Statistics.Median, m => IsMove(m, size)), 1),
        }),
    ];
    /// <inheritdoc/>
    public override Headline Headline => new(
        Metric.TimesBetter("BufferMemoryPool vs MemoryPool.Shared, Pipe throughput, 4 KiB segments (times as fast)", Pool, Shared, m => IsTimed(m, 4096)),
        Metric.TimesBetter("BufferMemoryPool vs MemoryPool.Shared, 64 KiB segments (times as fast)", Pool, Shared, m => IsTimed(m, 65536)),
        new Metric("MemoryPool.Shared bytes allocated per 4 KiB segment (writer thread)", Unit.BytesPerOp, f => f.Value(Shared, m => m.Statistics.Median, m => IsMove(m, 4096))),
        new Metric("BufferMemoryPool bytes allocated per 4 KiB segment (writer thread)", Unit.BytesPerOp, f => f.Value(Pool, m => m.Statistics.Median, m => IsMove(m, 4096))));

    /// <inheritdoc/>
    public override IReadOnlyList<ParameterSpec> DescribeParameters(RunSettings settings) =>
    [
        new("segment", "bytes per pipe segment (the pipe's minimum segment size; each write fills one)", SegmentSizes.Select(s => s.ToString(System.Globalization.CultureInfo.InvariantCulture)).ToArray()),
        new("measure", "timed: interleaved samples; move: one untimed long move, the writer thread's allocations and the GCs", ["timed", "move"]),
    ];

    private static bool IsTimed(Measurement m, int size) => m.Parameters.Is("measure", "timed") && m.Parameters.Is("segment", size);
    private static bool IsMove(Measurement m, int size) => m.Parameters.Is("measure", "move") && m.Parameters.Is("segment", size);

    /// <inheritdoc/>
    public override void Run(ExperimentContext context)
    {
        using var pool = new BufferMemoryPool(new BufferMemoryPoolOptions { Name = "lab.pipelines" });
        long moveBytes = context.Settings.Pick(16L << 20, 128L << 20, 1L << 30);
        foreach (int size in SegmentSizes)
        {
            using var shared = new PipeMove(MemoryPool<byte>.Shared, size);
            using var ours = new PipeMove(pool, size);
            context.Compare([(Shared, shared.Move), (Pool, ours.Move)], Parameters.Of(("segment", size), ("measure", "timed")));
            foreach (var (variant, run) in new[] { (Shared, shared), (Pool, ours) })
            {
                context.Status($"{variant}, {size / 1024} KiB segments: moving {moveBytes >> 20} MiB untimed");
                long segments = moveBytes / size;
                run.Move(WarmUpBytes / size); // "after warm-up": a pool reaches its steady population here, not in the count (the timed samples may be few on a busy machine)
                var before = GcSnapshot.Take(allThreads: false); // the writer thread: every rent (and so every array or owner the pool must allocate) happens here
                run.Move(segments);
                var after = GcSnapshot.Take(allThreads: false);
                double perSegment = (double)(after.AllocatedBytes - before.AllocatedBytes) / segments;
                context.RecordSamples(variant, Unit.BytesPerOp, [perSegment], Parameters.Of(("segment", size), ("measure", "move")),
                    metrics: new Dictionary<string, double> { ["gen0"] = after.Gen0 - before.Gen0, ["gen1"] = after.Gen1 - before.Gen1, ["gen2"] = after.Gen2 - before.Gen2, ["bytesMoved"] = moveBytes });
                context.Note($"{variant}, {size / 1024} KiB segments: {perSegment:N2} B allocated per segment on the writer thread (where every rent happens) and {after.Gen0 - before.Gen0} gen-0, {after.Gen1 - before.Gen1} gen-1, {after.Gen2 - before.Gen2} gen-2 GCs over {moveBytes >> 20:N0} MiB; {run.BytesMoved >> 20:N0} MiB moved in all.");
            }
        }
        if (moveBytes < 1L << 30) context.Note($"{(context.IsSmoke ? "Smoke" : "Quick")} mode: the untimed move was {moveBytes >> 20} MiB per variant and size, not the full run's 1 GiB.");
        var stats = pool.GetStatistics();
        context.Note($"BufferMemoryPool after the run: {stats.Rents:N0} rents, {stats.Outstanding} outstanding, {stats.RetainedBytes >> 10:N0} KiB retained by its manager.");
    }
}
