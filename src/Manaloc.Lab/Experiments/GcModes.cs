using System.Collections.Concurrent;
using System.Diagnostics.Tracing;
using System.Runtime;
using System.Runtime.CompilerServices;

namespace Manaloc.Lab.Experiments;

/// <summary>
/// Seed 003, "Parallelism and Memory Usage": a parallel loop that creates a small temporary object
/// (a class of two doubles) per iteration, against the same work with struct locals, each under
/// workstation and server GC. Each GC mode runs in its own child process with <c>DOTNET_gcServer</c>
/// set, so the mode is real. Time, GC counts and the share of time in GC pauses; then the
/// most-allocated types, found by sampling the runtime's GC AllocationTick events with an
/// <see cref="EventListener"/> (the article's memory-allocation profiler view).
/// </summary>
public sealed class GcModes() : Experiment(
    "gc-modes", "Parallelism and Memory Usage (seed 003)",
    "Parallel loop with a two-double class temporary vs struct locals, under workstation and server GC (child processes); allocation sampling.",
    [ClassVariant, StructVariant, NoEscapeVariant], ClassVariant, quickSeconds: 6.5)
{
    private const string ClassVariant = "class temporaries";
    private const string StructVariant = "struct locals";
    private const string NoEscapeVariant = "class, not escaping";
    private const string Workstation = "workstation";
    private const string Server = "server";

    /// <inheritdoc/>
    public override Claim Claim => new("Parallel loop: 1.1 s with a temporary two-double object per iteration → 0.25 s with local doubles (4 cores, hyper-threaded)", 1.1 / 0.25,
        Metric.TimesBetter("struct locals vs class temporaries, workstation GC", StructVariant, ClassVariant, m => m.Parameters.Is("gc", Workstation)));
    /// <inheritdoc/>
    /// <remarks>No Manaloc path: the choice is the user's own code (a struct local instead of a class temporary).</remarks>
    public override Headline Headline => new(
        Metric.TimesBetter("no Manaloc path: struct locals vs class temporaries in a parallel loop, workstation GC (times as fast)", StructVariant, ClassVariant, m => m.Parameters.Is("gc", Workstation)),
        Metric.TimesBetter("the same under server GC", StructVariant, ClassVariant, m => m.Parameters.Is("gc", Server)));

    private static int Iterations(RunSettings settings) => settings.Pick(smoke: 100_000, quick: 4_000_000, full: 20_000_000);

    /// <inheritdoc/>
    public override IReadOnlyList<ParameterSpec> DescribeParameters(RunSettings settings) =>
    [
        new("gc", "GC mode of the child process (DOTNET_gcServer)", [Workstation, Server]),
        new("iterations", "iterations of the parallel loop", [Iterations(settings).ToString(CultureInfo.InvariantCulture)]),
    ];

    /// <inheritdoc/>
    public override void Run(ExperimentContext context)
    {
        var rows = new List<IReadOnlyList<string>>();
        context.Note("GC counts, pause time and bytes are totals over all repetitions of a variant; B/op is bytes per loop iteration.");
        foreach (var (mode, value) in new[] { (Workstation, "0"), (Server, "1") })
        {
            // The allocation sampling feeds only the table below, which the report takes from the first launch: the later
            // launches' children leave it out.
            var child = context.RunChild("run", [mode, context.Settings.ReportsNotesAndTables ? SampleKey : NoSampleKey],
                new Dictionary<string, string?> { ["DOTNET_gcServer"] = value });
            foreach (var m in child.Measurements) context.Record(m);
            foreach (var note in child.Notes) context.Note(note);
            if (child.Machine is { } machine && !machine.GcMode.Contains(mode, StringComparison.OrdinalIgnoreCase))
            {
                context.Note($"The child asked for {mode} GC reported '{machine.GcMode}'.");
            }
            foreach (var (key, text) in child.Texts.Where(t => t.Key.StartsWith("alloc.", StringComparison.Ordinal)).OrderBy(t => t.Key, StringComparer.Ordinal))
            {
                var parts = text.Split('|');
                rows.Add([mode, parts[0], parts[1], parts[2], parts[3], parts[4]]);
            }
        }
        foreach (var m in context.Measurements.Where(m => m.Variant == NoEscapeVariant && m.AllocatedBytesPerOp is not null))
        {
            context.Note(m.AllocatedBytesPerOp > 1
                ? $"{m.Parameters["gc"]}: the non-escaping class temporary still allocates {Format.Significant(m.AllocatedBytesPerOp.Value)} B per iteration: the JIT did not move it to the stack here."
                : $"{m.Parameters["gc"]}: the non-escaping class temporary allocates nothing: the JIT's escape analysis put it on the stack.");
        }
        context.AddTable(new ResultTable(
            "Most-allocated types, sampled from GC AllocationTick events (one event per ~100 KB allocated)",
            ["gc", "variant", "type", "samples", "≈ bytes", "share"], rows));
    }

    /// <inheritdoc/>
    public override void RunChild(string key, IReadOnlyList<string> arguments, ExperimentContext context)
    {
        if (key != "run") base.RunChild(key, arguments, context);
        string mode = GCSettings.IsServerGC ? Server : Workstation; // what the runtime really runs, not what was asked
        int iterations = Iterations(context.Settings);
        int repetitions = context.IsSmoke ? 2 : context.IsQuick ? 4 : 10;
        var loops = new (string Variant, Func<int, double> Loop)[]
        {
            (ClassVariant, ClassLoop), (StructVariant, StructLoop), (NoEscapeVariant, NoEscapeLoop),
        };
        // The harness warms every loop up (the JIT and the thread pool) and runs the repetitions interleaved, accounting each run's
        // wall time, allocation and collections.
        var runs = Scenarios.Run(context, [.. loops.Select(l => (l.Variant, l.Loop))], iterations, warmUpSize: Math.Min(iterations, 200_000), rounds: repetitions);
        foreach (var (variant, taken) in runs)
        {
            var samples = taken.Select(r => r.Wall.TotalMilliseconds).ToList();
            double sink = taken.Sum(r => r.Result);
            double wallMs = samples.Sum();
            double pauseMs = taken.Sum(r => r.GcPauseMs);
            long allocated = taken.Sum(r => r.AllocatedBytes);
            int gen0 = taken.Sum(r => r.Gc.Gen0), gen1 = taken.Sum(r => r.Gc.Gen1), gen2 = taken.Sum(r => r.Gc.Gen2);
            context.Record(new Measurement
            {
                Variant = variant,
                Parameters = Parameters.Of(("gc", mode), ("iterations", iterations)),
                Unit = "ms",
                LowerIsBetter = true,
                Statistics = Statistics.From(samples),
                Threads = Environment.ProcessorCount,
                AllocatedBytes = allocated,
                AllocatedBytesPerOp = allocated / ((double)iterations * repetitions),
                Gc = new GcCounts { Gen0 = gen0, Gen1 = gen1, Gen2 = gen2 },
                GcPauseMs = pauseMs,
                Metrics = new Dictionary<string, double>
                {
                    ["gcPausePercent"] = wallMs > 0 ? 100 * pauseMs / wallMs : 0,
                    ["repetitions"] = repetitions,
                    ["checksum"] = sink % 1000,
                },
            });
        }
        if (!Samples(arguments)) return;
        SampleAllocations(context, ClassVariant, ClassLoop, iterations);
        SampleAllocations(context, StructVariant, StructLoop, iterations);
    }

    /// <summary>The child's second argument: whether it samples the most-allocated types for the table (the first launch's children).</summary>
    private const string SampleKey = "sample", NoSampleKey = "no-sample";

    /// <summary>Whether a child given <paramref name="arguments"/> (its GC mode, then <see cref="SampleKey"/> or <see cref="NoSampleKey"/>; without the second it samples) samples allocations.</summary>
    /// <exception cref="ArgumentException">More than two arguments, or a second that is neither key.</exception>
    internal static bool Samples(IReadOnlyList<string> arguments)
    {
        ArgumentNullException.ThrowIfNull(arguments);
        if (arguments.Count <= 1) return true;
        if (arguments.Count == 2 && arguments[1] is SampleKey or NoSampleKey) return arguments[1] == SampleKey;
        throw new ArgumentException($"A gc-modes child takes its GC mode and then '{SampleKey}' or '{NoSampleKey}', not '{string.Join(' ', arguments)}'.", nameof(arguments));
    }

    /// <summary>Runs <paramref name="loop"/> under an allocation-tick listener and sends back the top types.</summary>
    private static void SampleAllocations(ExperimentContext context, string variant, Func<int, double> loop, int iterations)
    {
        context.Status($"sampling allocations: {variant}");
        using var sampler = new AllocationSampler();
        GC.KeepAlive(loop(iterations));
        // Runtime events reach an in-process listener through a dispatch thread: wait until the count settles.
        long seen = -1;
        var wait = LabClock.Budget(TimeSpan.FromSeconds(1));
        while (!wait.IsSpent)
        {
            Thread.Sleep(50);
            long now = sampler.TotalSamples;
            // Settled: no new event for one poll (after a short grace period when none came at all).
            if (now == seen && (now > 0 || wait.Elapsed > TimeSpan.FromMilliseconds(300))) break;
            seen = now;
        }
        var top = sampler.Snapshot().OrderByDescending(t => t.Bytes).Take(5).ToArray();
        long total = Math.Max(1, top.Sum(t => t.Bytes));
        if (top.Length == 0)
        {
            context.SetText($"alloc.{variant}.0", $"{variant}|(no allocation samples)|0|0|0%");
        }
        for (int i = 0; i < top.Length; i++)
        {
            var (type, count, bytes) = top[i];
            context.SetText($"alloc.{variant}.{i}",
                $"{variant}|{type}|{count.ToString(CultureInfo.InvariantCulture)}|{Format.Significant(bytes)}|{(100.0 * bytes / total).ToString("0.#", CultureInfo.InvariantCulture)}%");
        }
    }

    // The workload: the parallel loops, their temporaries and the allocation sampler.
    private static double ClassLoop(int iterations)
    {
        double total = 0;
        Parallel.For(0, iterations, () => 0.0, (i, _, acc) => acc + Length(new Pair(i * 0.5, i * 0.25)), acc => Add(ref total, acc));
        return total;
    }

    private static double StructLoop(int iterations)
    {
        double total = 0;
        Parallel.For(0, iterations, () => 0.0, (i, _, acc) => acc + Length(new PairStruct(i * 0.5, i * 0.25)), acc => Add(ref total, acc));
        return total;
    }

    /// <summary>The class temporary used only inside the body: .NET 10's escape analysis may put it on the stack.</summary>
    private static double NoEscapeLoop(int iterations)
    {
        double total = 0;
        Parallel.For(0, iterations, () => 0.0, (i, _, acc) =>
        {
            var p = new Pair(i * 0.5, i * 0.25);
            return acc + Math.Sqrt(p.X * p.X + p.Y * p.Y);
        }, acc => Add(ref total, acc));
        return total;
    }

    private static void Add(ref double target, double value)
    {
        double current = Volatile.Read(ref target);
        while (true)
        {
            // CAS loop: the only ordering needed is that no thread's partial sum is lost.
            double seen = Interlocked.CompareExchange(ref target, current + value, current);
            if (seen.Equals(current)) return;
            current = seen;
        }
    }

    // Not inlined, so the temporary escapes into a call, as in the article's customer code.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static double Length(Pair p) => Math.Sqrt(p.X * p.X + p.Y * p.Y);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static double Length(PairStruct p) => Math.Sqrt(p.X * p.X + p.Y * p.Y);

    /// <summary>The article's "pretty simple structure containing two doubles", as a class.</summary>
    private sealed class Pair(double x, double y)
    {
        public double X { get; } = x;
        public double Y { get; } = y;
    }

    /// <summary>The same two doubles as a struct.</summary>
    private readonly struct PairStruct(double x, double y)
    {
        public double X { get; } = x;
        public double Y { get; } = y;
    }

    /// <summary>Counts GC AllocationTick events (keyword GC = 0x1, verbose) per type name.</summary>
    private sealed class AllocationSampler : EventListener
    {
        private readonly ConcurrentDictionary<string, StrongBox<(long Count, long Bytes)>> _types = new(StringComparer.Ordinal);
        private long _total;

        public long TotalSamples => Interlocked.Read(ref _total);

        public (string Type, long Count, long Bytes)[] Snapshot()
            => _types.Select(kv => { var v = kv.Value.Value; return (kv.Key, v.Count, v.Bytes); }).ToArray();

        protected override void OnEventSourceCreated(EventSource eventSource)
        {
            if (eventSource.Name == "Microsoft-Windows-DotNETRuntime")
            {
                EnableEvents(eventSource, EventLevel.Verbose, (EventKeywords)0x1);
            }
        }

        protected override void OnEventWritten(EventWrittenEventArgs eventData)
        {
            if (eventData.EventName is null || !eventData.EventName.StartsWith("GCAllocationTick", StringComparison.Ordinal) || eventData.PayloadNames is null) return;
            int typeIndex = eventData.PayloadNames.IndexOf("TypeName");
            int amountIndex = eventData.PayloadNames.IndexOf("AllocationAmount64");
            if (amountIndex < 0) amountIndex = eventData.PayloadNames.IndexOf("AllocationAmount");
            string type = typeIndex >= 0 ? eventData.Payload?[typeIndex] as string ?? "?" : "?";
            long amount = amountIndex >= 0 ? Convert.ToInt64(eventData.Payload?[amountIndex], CultureInfo.InvariantCulture) : 0;
            var box = _types.GetOrAdd(type, _ => new StrongBox<(long, long)>());
            lock (box)
            {
                box.Value = (box.Value.Count + 1, box.Value.Bytes + amount);
            }
            Interlocked.Increment(ref _total); // read by the waiting thread to see the stream settle
        }
    }
}
