using System.Buffers;
using Manaloc.Buffers;
using Manaloc.Threading;

namespace Manaloc.Lab.Experiments;

/// <summary>
/// Seed 002, "Tradeoffs in High Performance Software" (buffer reuse, as in Netty's allocators and
/// MiscUtil's IBufferManager): rent, touch and return buffers from 256 B to 1 MiB with
/// <c>new byte[]</c>, <see cref="ArrayPool{T}.Shared"/> and Manaloc's <see cref="BufferManager"/>;
/// then 4 KiB buffers on 1 and 2 threads.
/// </summary>
public sealed class Buffers() : Experiment(
    "buffers", "Tradeoffs in High Performance Software (seed 002)",
    "Rent, touch, return buffers of 256 B to 64 MiB: new byte[] vs ArrayPool.Shared vs BufferManager; 4 KiB on 1 and 2 threads.",
    [New, Shared, Manager], Shared, quickSeconds: 6.5, quickLaunches: 2, sweepParameter: "size")
{
    private const string New = "new byte[]";
    private const string Shared = "ArrayPool.Shared";
    private const string Manager = "BufferManager";

    /// <inheritdoc/>
    public override Claim Claim => new("No figure: reusing byte buffers instead of allocating them relieves the GC, especially for large arrays", null,
        new Metric("BufferManager vs new byte[], largest size", Unit.Ratio, f => f.TimesBetter(Manager, New, m => IsSingle(m) && m.Parameters.Is("size", LargestSize(f.All)))));
    /// <inheritdoc/>
    public override IReadOnlyList<Target> Targets =>
    [
        .. new[] { 1, 2 }.SelectMany(threads => new[]
        {
            Target.AtLeast(Metric.TimesBetter($"BufferManager vs ArrayPool.Shared throughput, 4 KiB, {Format.Count(threads, "thread")}", Manager, Shared, m => IsPattern(m) && m.Threads == threads), 1),
            Target.AtMost($"BufferManager bytes per rent/return, 4 KiB, {Format.Count(threads, "thread")}", Unit.BytesPerOp, f => f.Value(Manager, m => m.AllocatedBytesPerOp, m => IsPattern(m) && m.Threads == threads), 0.01),
        }),
        // Above 1 MiB ArrayPool.Shared still pools: a drop-in must not allocate per rent there either.
        .. LargeSizes.SelectMany(size => new[]
        {
            Target.AtLeast(Metric.TimesBetter($"BufferManager vs ArrayPool.Shared throughput, {size >> 20} MiB", Manager, Shared, m => IsSize(m, size)), 1),
            Target.AtMost($"BufferManager bytes per rent/return, {size >> 20} MiB", Unit.BytesPerOp, f => f.Value(Manager, m => m.AllocatedBytesPerOp, m => IsSize(m, size)), 0.01),
        }),
    ];

    /// <summary>Sizes above 1 MiB, where ArrayPool.Shared still pools.</summary>
    private static readonly int[] LargeSizes = [4 << 20, 64 << 20];

    private static bool IsSize(Measurement m, int size)
        => IsSingle(m) && m.Parameters.Is("size", size);

    private static bool IsPattern(Measurement m) => m.Parameters.Contains("pattern");
    private static bool IsSingle(Measurement m) => !IsPattern(m) && m.Parameters.Contains("size");
    private static int LargestSize(IEnumerable<Measurement> all)
        => all.Where(IsSingle).Select(m => m.Parameters.Int("size")).DefaultIfEmpty(-1).Max();
    /// <inheritdoc/>
    public override Headline Headline => new(
        Metric.TimesBetter("BufferManager vs ArrayPool.Shared, rent/touch/return 4 KiB, 1 thread (times as fast)", Manager, Shared, m => IsPattern(m) && m.Threads == 1),
        Metric.TimesBetter("BufferManager vs ArrayPool.Shared, 64 MiB (times as fast)", Manager, Shared, m => IsSize(m, 64 << 20)),
        new Metric("BufferManager vs new byte[], largest size (times as fast)", Unit.Ratio, f => f.TimesBetter(Manager, New, m => IsSingle(m) && m.Parameters.Is("size", LargestSize(f.All)))));

    /// <summary>The sizes measured one at a time: every size in full mode; in quick mode the large ones the targets read and two below them for the chart.</summary>
    private static int[] Sizes(RunSettings settings) => settings.Pick<int[]>(smoke: [256, 4096, .. LargeSizes], quick: [4096, 1 << 20, .. LargeSizes], full: [256, 4096, 65536, 1 << 20, .. LargeSizes]);

    /// <inheritdoc/>
    public override IReadOnlyList<ParameterSpec> DescribeParameters(RunSettings settings) =>
    [
        new("size", "bytes asked for per rent", Sizes(settings).Select(s => s.ToString(System.Globalization.CultureInfo.InvariantCulture)).ToArray()),
        new("threads", "threads renting 4 KiB buffers at once (second part)", ["1", "2"]),
    ];

    /// <inheritdoc/>
    public override void Run(ExperimentContext context)
    {
        var shared = ArrayPool<byte>.Shared;
        using var manager = new BufferManager(new BufferManagerOptions { Name = "lab.buffers" });
        long sink = 0;
        // The bodies time a bare Rent/Touch/Return, as hot paths write it; a try/finally would be part of what is timed,
        // and Touch (a loop over the array) cannot throw.
#pragma warning disable MNL101 // Return outside finally: see above
        var sized = new List<(int Size, string Variant, Action<long> Body)>();
        foreach (int size in Sizes(context.Settings))
        {
            sized.Add((size, New, n => { for (long i = 0; i < n; i++) { var b = new byte[size]; sink += Touch(b, size); } }));
            sized.Add((size, Shared, n => { for (long i = 0; i < n; i++) { var b = shared.Rent(size); sink += Touch(b, size); shared.Return(b); } }));
            sized.Add((size, Manager, n => { for (long i = 0; i < n; i++) { var b = manager.Rent(size); sink += Touch(b, size); manager.Return(b); } }));
        }
        const int Size = 4096;
        var sinks = new Padded<long>[3]; // one cache line per thread: the threads' sums do not share one
        var threaded = new (string Variant, Action<int, long> Body)[]
        {
            (New, (t, n) => { long s = 0; for (long i = 0; i < n; i++) { var b = new byte[Size]; s += Touch(b, Size); } sinks[t].Value += s; }),
            (Shared, (t, n) => { long s = 0; for (long i = 0; i < n; i++) { var b = shared.Rent(Size); s += Touch(b, Size); shared.Return(b); } sinks[t].Value += s; }),
            (Manager, (t, n) => { long s = 0; for (long i = 0; i < n; i++) { var b = manager.Rent(Size); s += Touch(b, Size); manager.Return(b); } sinks[t].Value += s; }),
        };
#pragma warning restore MNL101

        // Tiered JIT: ArrayPool.Shared runs precompiled, optimised code from the first call; bring every
        // body (and the manager's code inlined into it) to optimised code before measuring. Each variant's bodies are one
        // method over every size (a closure per size), so new byte[] of 1 MiB and more is called with no operation: its
        // 4 KiB calls run the method's loop, and 80 allocations of 64 MiB (5 GB zeroed, a gen-2 collection each) would
        // only take a second of every launch.
        TierUp.Run(context,
        [
            .. sized.Select(c => (Action)(() => c.Body(c.Size < 1 << 20 ? 50 : c.Variant == New ? 0 : 1))),
            .. threaded.Select(c => (Action)(() => c.Body(0, 50))),
        ]);

        // new byte[] of 1 MiB and more: a fixed amount allocated per sample rather than the harness's count. Such an array
        // costs little until its allocations start collections (fresh pages, a budget not yet spent), so the fastest rounds
        // of a calibration are collection-free and its count made samples 10-25 times the target (a 4 MiB sample took
        // 210 ms, a quarter of the experiment); a fixed amount keeps each sample near the target with its share of them.
        long largeBytesPerSample = context.Settings.Pick(smoke: 64L << 20, quick: 64L << 20, full: 1L << 30);
        foreach (var (size, variant, body) in sized)
        {
            long? operations = variant == New && size >= 1 << 20 ? Math.Max(1, largeBytesPerSample / size) : null;
            context.Measure(variant, body, Parameters.Of(("size", size)), operations);
        }

        var tp = Parameters.Of(("size", Size), ("pattern", "threads"));
        // Fixed totals, not calibration: on a busy machine a slow first round (thread start, barrier
        // wake-ups) can make calibration settle on rounds of a few operations timed mostly as overhead.
        // new byte[] takes a hundredth of the pools' total (about 600 ns an allocation against 15 ns a rent): its samples
        // stay near the sample target instead of 60 ms each, and no target reads it.
        long pooledTotal = context.IsSmoke ? 4_000 : context.IsQuick ? 1_000_000 : 8_000_000;
        foreach (int threads in new[] { 1, 2 })
        {
            foreach (var (variant, body) in threaded) context.MeasureThreads(variant, threads, body, tp, variant == New ? Math.Max(100, pooledTotal / 100) : pooledTotal);
        }
        GC.KeepAlive(sink);
        GC.KeepAlive(sinks);
        var stats = manager.GetStatistics();
        context.Note($"BufferManager counters after the run: {Format.Count(stats.Rents, "rent", format: "N0")}, {stats.LocalHits:N0} from the thread's own stack, {Format.Count(stats.Creations, "buffer", format: "N0")} created, {stats.Retained:N0} retained.");
    }

    /// <summary>Writes the first and last byte and reads one in the middle: enough that the buffer is really used.</summary>
    private static long Touch(byte[] buffer, int size)
    {
        buffer[0] = 1;
        buffer[size - 1] = 2;
        return buffer[size / 2];
    }
}
