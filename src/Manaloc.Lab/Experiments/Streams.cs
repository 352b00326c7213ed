using System.IO.Compression;
using Manaloc.Buffers;
using Manaloc.Lab.Subjects;
using Microsoft.IO;

namespace Manaloc.Lab.Experiments;

/// <summary>
/// Payloads from 1 KiB to 16 MiB written into a growable in-memory stream in 4 KiB writes, then read back in 4 KiB
/// reads: <see cref="MemoryStream"/> (one array, doubled by copying), Microsoft.IO's <c>RecyclableMemoryStream</c>
/// (pooled 128 KiB blocks) and Manaloc's <see cref="PooledBufferStream"/> (pooled segments); plus the same payload
/// compressed into each through a <see cref="GZipStream"/>. One operation: a new stream, written, read back, disposed.
/// A floor variant (raw only) does the same calls on a MemoryStream over one reused array of exactly the payload's size:
/// no growth, no pool, only the copies, which bounds what any growable stream can gain over another.
/// </summary>
public sealed class Streams() : Experiment(
    "streams", "Manaloc's own claim: a pooled Stream where a MemoryStream serves as a growable buffer",
    "Payloads of 1 KiB to 16 MiB written and read back, and gzip-compressed into: MemoryStream vs RecyclableMemoryStream vs PooledBufferStream.",
    [Memory, Recyclable, Ours, Floor], Memory, quickSeconds: 9, sweepParameter: "size")
{
    private const string Memory = "MemoryStream", Recyclable = "RecyclableMemoryStream", Ours = "PooledBufferStream", Floor = "floor: reused presized array";
    private const int Chunk = 4096;

    /// <inheritdoc/>
    public override Claim Claim => new("No figure: a stream over pooled segments does a MemoryStream's work as a growable buffer without its copies and large-object allocations", null,
        Metric.TimesBetter("PooledBufferStream vs MemoryStream, 1 MiB written and read", Ours, Memory, m => Payloads.Is(m, 1 << 20, "raw")));
    /// <inheritdoc/>
    public override IReadOnlyList<Target> Targets =>
    [
        .. Payloads.Sizes(RunSettings.Quick()).Where(s => s >= 64 << 10).SelectMany(size => new[]
        {
            Target.AtLeast(Metric.TimesBetter($"PooledBufferStream vs MemoryStream, {Payloads.Label(size)}", Ours, Memory, m => Payloads.Is(m, size, "raw")), 2).AgainstFloor(AgainstFloor(size)),
            Target.AtLeast(Metric.TimesBetter($"PooledBufferStream vs RecyclableMemoryStream, {Payloads.Label(size)}", Ours, Recyclable, m => Payloads.Is(m, size, "raw")), 1.2).AgainstFloor(AgainstFloor(size)),
        }),
        Target.AtLeast(Metric.TimesBetter("PooledBufferStream vs MemoryStream, 1 KiB (no slower)", Ours, Memory, m => Payloads.Is(m, 1 << 10, "raw")), 1).AgainstFloor(AgainstFloor(1 << 10)),
    ];

    /// <summary>
    /// PooledBufferStream against the floor at <paramref name="size"/> (raw, where the floor is measured): a goal against
    /// another stream that the floor itself does not reach is judged against the floor instead (within 5%).
    /// </summary>
    private static Metric AgainstFloor(int size)
        => Metric.TimesBetter($"PooledBufferStream vs the floor (reused presized array), {Payloads.Label(size)}", Ours, Floor, m => Payloads.Is(m, size, "raw"));
    /// <inheritdoc/>
    public override Headline Headline => new(
        Metric.TimesBetter("PooledBufferStream vs MemoryStream, 1 MiB written and read (times as fast)", Ours, Memory, m => Payloads.Is(m, 1 << 20, "raw")),
        Metric.TimesBetter("PooledBufferStream vs RecyclableMemoryStream, 1 MiB (times as fast)", Ours, Recyclable, m => Payloads.Is(m, 1 << 20, "raw")),
        Metric.TimesBetter("Floor vs RecyclableMemoryStream, 1 MiB: the most any stream can gain (times as fast)", Floor, Recyclable, m => Payloads.Is(m, 1 << 20, "raw")),
        Metric.TimesBetter("PooledBufferStream vs MemoryStream, 1 MiB through GZipStream (times as fast)", Ours, Memory, m => Payloads.Is(m, 1 << 20, "gzip")));

    /// <inheritdoc/>
    public override IReadOnlyList<ParameterSpec> DescribeParameters(RunSettings settings) =>
    [
        Payloads.SizeParameter(settings, "payload bytes"),
        new("format", "raw: 4 KiB writes, then 4 KiB reads from the start; gzip: the payload compressed (fastest level) into the stream", ["raw", "gzip"]),
    ];

    /// <inheritdoc/>
    public override void Run(ExperimentContext context)
    {
        var recyclable = new RecyclableMemoryStreamManager();
        var manager = BufferManager.Shared; // what a stream created without arguments uses
        var chunk = new byte[Chunk];
        for (int i = 0; i < chunk.Length; i++) chunk[i] = (byte)(' ' + i * 7 % 90); // compressible, like text
        var readBuffer = new byte[Chunk];
        long sink = 0;
        foreach (string format in new[] { "raw", "gzip" })
        {
            foreach (int size in Payloads.Sizes(context.Settings))
            {
                // Compression dominates: quick mode compresses the 1 MiB payload only (the one the headline reads).
                if (format == "gzip" && context.IsQuick && !context.IsSmoke && size != 1 << 20) continue;
                void Use(Stream stream)
                {
                    if (format == "raw")
                    {
                        sink += StreamRoundTrip.WriteThenRead(stream, size, chunk, readBuffer);
                        return;
                    }
                    using (var gzip = new GZipStream(stream, CompressionLevel.Fastest, leaveOpen: true))
                    {
                        for (int at = 0; at < size; at += Chunk) gzip.Write(chunk, 0, Math.Min(Chunk, size - at));
                    }
                    sink += stream.Length;
                }
                var floor = new byte[size];
                List<(string, Action<long>)> variants =
                [
                    (Memory, n => { for (long i = 0; i < n; i++) { using var s = new MemoryStream(); Use(s); } }),
                    (Recyclable, n => { for (long i = 0; i < n; i++) { using var s = recyclable.GetStream(); Use(s); } }),
                    (Ours, n => { for (long i = 0; i < n; i++) { using var s = new PooledBufferStream(manager); Use(s); } }),
                ];
                // The floor: a fixed stream over one warm array, so only the copies remain (raw only: gzip's output size is not the payload's).
                if (format == "raw") variants.Add((Floor, n => { for (long i = 0; i < n; i++) { using var s = new MemoryStream(floor, 0, size, writable: true, publiclyVisible: true); Use(s); } }));
                context.Compare(variants, Parameters.Of(("size", size), ("format", format)));
            }
        }
        GC.KeepAlive(sink);
        context.Note($"One operation: a new stream; raw: written in {Chunk / 1024} KiB writes, read back from the start in {Chunk / 1024} KiB reads; gzip: compressed into it (fastest level); then disposed. RecyclableMemoryStreamManager with default options.");
        context.Note("The floor (raw only) is a MemoryStream over one reused array of exactly the payload's size: the same calls with nothing but the copies, so (RecyclableMemoryStream's time) / (the floor's) bounds the ratio any stream can reach over RecyclableMemoryStream.");
        if (context.IsQuick && !context.IsSmoke) context.Note("Quick mode: gzip at 1 MiB only.");
    }
}
