using System.Buffers;
using System.Text.Json;
using CommunityToolkit.HighPerformance.Buffers;
using Manaloc.Buffers;

namespace Manaloc.Lab.Experiments;

/// <summary>
/// Payloads from 1 KiB to 16 MiB written into an <see cref="IBufferWriter{T}"/>, raw (4 KiB writes) and as JSON with
/// <see cref="Utf8JsonWriter"/>, then read back (copied out): <see cref="ArrayBufferWriter{T}"/> (one array, grown by
/// copying), CommunityToolkit.HighPerformance's <c>ArrayPoolBufferWriter&lt;byte&gt;</c> (one pooled array, grown by
/// copying into a larger one) and Manaloc's <see cref="PooledBufferWriter"/> (pooled segments, never copied).
/// One operation: a new writer, the payload written, read back, the writer disposed.
/// </summary>
public sealed class BufferWriter() : Experiment(
    "buffer-writer", "Manaloc's own claim: a pooled IBufferWriter<byte> for serializers",
    "Payloads of 1 KiB to 16 MiB written raw and as JSON (Utf8JsonWriter), then read back: ArrayBufferWriter vs ArrayPoolBufferWriter vs PooledBufferWriter.",
    [ArrayWriter, ToolkitWriter, Ours, Floor, Alone], ArrayWriter, quickSeconds: 19, sweepParameter: "size")
{
    private const string ArrayWriter = "ArrayBufferWriter", ToolkitWriter = "ArrayPoolBufferWriter", Ours = "PooledBufferWriter", Alone = "PooledBufferWriter, alone";
    /// <summary>The payload's own cost: one reused array sized for it, so nothing grows, copies on growth or allocates.</summary>
    private const string Floor = "floor: reused presized array";
    private const int Chunk = 4096;

    /// <inheritdoc/>
    public override Claim Claim => new("No figure: a writer that appends pooled segments instead of growing one array writes large payloads without copying or allocating", null,
        Metric.TimesBetter("PooledBufferWriter vs ArrayBufferWriter, 1 MiB raw", Ours, ArrayWriter, m => Payloads.Is(m, 1 << 20, "raw")));
    /// <inheritdoc/>
    public override IReadOnlyList<Target> Targets =>
    [
        .. Cases(RunSettings.Quick()).Where(c => c.Size >= 64 << 10).Select(c =>
            Target.AtLeast(Metric.TimesBetter($"PooledBufferWriter vs ArrayBufferWriter, {c.Label}", Ours, ArrayWriter, m => Payloads.Is(m, c.Size, c.Format)), 1.5).AgainstFloor(AgainstFloor(c))),
        .. Cases(RunSettings.Quick()).Select(c =>
            Target.AtLeast(Metric.TimesBetter($"PooledBufferWriter vs ArrayPoolBufferWriter, {c.Label}", Ours, ToolkitWriter, m => Payloads.Is(m, c.Size, c.Format)), 1.0).AgainstFloor(AgainstFloor(c))),
        Target.AtMost("PooledBufferWriter bytes allocated per payload besides the writer object, largest payload, measured alone (worst format)", Unit.BytesPerOp,
            f => f.All.Where(m => m.Variant == Alone).Max(m => m.AllocatedBytesPerOp - WriterObjectBytes), 0.5),
    ];
    /// <inheritdoc/>
    public override Headline Headline => new(
        Metric.TimesBetter("PooledBufferWriter vs ArrayBufferWriter, 1 MiB raw (times as fast)", Ours, ArrayWriter, m => Payloads.Is(m, 1 << 20, "raw")),
        Metric.TimesBetter("PooledBufferWriter vs ArrayPoolBufferWriter, 1 MiB raw (times as fast)", Ours, ToolkitWriter, m => Payloads.Is(m, 1 << 20, "raw")),
        Metric.TimesBetter("PooledBufferWriter vs ArrayBufferWriter, 1 MiB JSON (times as fast)", Ours, ArrayWriter, m => Payloads.Is(m, 1 << 20, "json")));

    /// <summary>
    /// PooledBufferWriter against the floor (a reused presized array) for one case, measured in every case: a goal
    /// against another writer that the floor itself does not reach is judged against the floor instead (within 5%).
    /// </summary>
    private static Metric AgainstFloor((int Size, string Format, string Label) c)
        => Metric.TimesBetter($"PooledBufferWriter vs the floor (reused presized array), {c.Label}", Ours, Floor, m => Payloads.Is(m, c.Size, c.Format));

    /// <summary>What one <see cref="PooledBufferWriter"/> object takes (the allowance of the zero-bytes target).</summary>
    private static readonly long WriterObjectBytes = MeasureWriterObject();

    private static long MeasureWriterObject()
    {
        new PooledBufferWriter().Dispose(); // type loading and the JIT out of the way
        long before = GC.GetAllocatedBytesForCurrentThread();
        new PooledBufferWriter().Dispose();
        return GC.GetAllocatedBytesForCurrentThread() - before;
    }

    /// <summary>
    /// Whether every cell of a case takes one payload per sample, warmed up for the run's warm-up instead of calibrated: a
    /// quick run's 16 MiB of JSON, whose one payload (tens of milliseconds) outlasts the sample target several times over,
    /// so calibration can find no other count and its sizing rounds (two payloads a cell) only repeated the formatting.
    /// </summary>
    private static bool OneOperationPerSample(RunSettings settings, int size, string format)
        => settings.Mode == RunMode.Quick && format == "json" && size >= 16 << 20;

    private static IEnumerable<(int Size, string Format, string Label)> Cases(RunSettings settings)
        => Payloads.Sizes(settings).SelectMany(size => new[] { "raw", "json" }.Select(format => (size, format, $"{Payloads.Label(size)} {format}")));

    /// <inheritdoc/>
    public override IReadOnlyList<ParameterSpec> DescribeParameters(RunSettings settings) =>
    [
        Payloads.SizeParameter(settings, "payload bytes (JSON: about that many)"),
        new("format", "raw: 4 KiB writes of bytes; json: objects written with one reused Utf8JsonWriter", ["raw", "json"]),
    ];

    /// <inheritdoc/>
    public override void Run(ExperimentContext context)
    {
        var manager = BufferManager.Shared; // what a writer created without arguments uses
        var chunk = new byte[Chunk];
        for (int i = 0; i < chunk.Length; i++) chunk[i] = (byte)(' ' + i % 90);
        var json = new Utf8JsonWriter(Stream.Null); // reused through Reset: its cost is the same for every writer
        long sink = 0;
        foreach (var (size, format, _) in Cases(context.Settings))
        {
            var readBack = new byte[size + (size >> 2) + 4096];
            var floor = new ArrayBufferWriter<byte>(readBack.Length);
            int Fill(IBufferWriter<byte> writer)
            {
                if (format == "raw")
                {
                    for (int at = 0; at < size; at += Chunk) writer.Write(chunk.AsSpan(0, Math.Min(Chunk, size - at)));
                    return size;
                }
                json.Reset(writer);
                json.WriteStartArray();
                for (int i = 0; json.BytesPending + json.BytesCommitted < size - 64; i++)
                {
                    json.WriteStartObject();
                    json.WriteNumber("id"u8, i);
                    json.WriteString("name"u8, "a buffer writer, measured"u8);
                    json.WriteBoolean("pooled"u8, (i & 1) == 0);
                    json.WriteEndObject();
                }
                json.WriteEndArray();
                json.Flush();
                return (int)json.BytesCommitted;
            }
            void Pooled(long n)
            {
                for (long i = 0; i < n; i++)
                {
                    using var writer = new PooledBufferWriter(manager);
                    int written = Fill(writer);
                    writer.CopyTo(readBack);
                    sink += readBack[written - 1];
                }
            }
            long? operations = OneOperationPerSample(context.Settings, size, format) ? 1 : null;
            var p = Parameters.Of(("size", size), ("format", format));
            context.Compare(
            [
                (ArrayWriter, p, n =>
                {
                    for (long i = 0; i < n; i++)
                    {
                        var writer = new ArrayBufferWriter<byte>();
                        Fill(writer);
                        writer.WrittenSpan.CopyTo(readBack);
                        sink += readBack[writer.WrittenCount - 1];
                    }
                }, operations),
                (ToolkitWriter, p, n =>
                {
                    for (long i = 0; i < n; i++)
                    {
                        using var writer = new ArrayPoolBufferWriter<byte>();
                        Fill(writer);
                        writer.WrittenSpan.CopyTo(readBack);
                        sink += readBack[writer.WrittenCount - 1];
                    }
                }, operations),
                (Ours, p, Pooled, operations),
                (Floor, p, n =>
                {
                    // No writer can cost less: what remains is the formatting (JSON) or the copying in (raw), and the copy out.
                    for (long i = 0; i < n; i++)
                    {
                        floor.ResetWrittenCount();
                        Fill(floor);
                        floor.WrittenSpan.CopyTo(readBack);
                        sink += readBack[floor.WrittenCount - 1];
                    }
                }, operations),
            ]);
            // The allocation target, measured without the other writers in between: their large-object garbage triggers
            // gen-2 GCs, after which the manager trims buffers idle since the previous one (by design), and the next
            // rents allocate again. That cost shows in the interleaved figures; this one is the writer's own.
            if (size == Payloads.Sizes(context.Settings)[^1]) context.Measure(Alone, Pooled, p, fixedOperations: operations);
        }
        GC.KeepAlive(sink);
        context.Note($"One operation: a new writer, the payload written ({Chunk / 1024} KiB writes raw; JSON objects through one reused Utf8JsonWriter), copied out, the writer disposed. A PooledBufferWriter object takes {WriterObjectBytes} B.");
    }
}
