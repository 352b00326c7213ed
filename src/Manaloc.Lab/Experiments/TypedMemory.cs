using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Manaloc.Lab.Subjects;
using Manaloc.Memory;

namespace Manaloc.Lab.Experiments;

/// <summary>
/// Seed 000, "Writing a Manual Memory Manager in C#": typed records in native memory. New+Delete,
/// property get/set through the interface, a scan-and-update pass over live records, and the managed
/// heap and full-GC pause with those records alive: managed class instances vs the article's
/// AllocHGlobal-per-object class vs TypeAllocator (checked and unchecked class handles, and the generated 16-byte
/// struct handles through a held ThreadHeap) vs the bulk RecordArray path. New+Delete is also set beside the raw
/// system calls a record replaces: AllocHGlobal+FreeHGlobal and NativeMemory.Alloc+Free of a 24-byte block, with no
/// object around it.
/// </summary>
public sealed class TypedMemory() : Experiment(
    "typed-memory", "Writing a Manual Memory Manager in C# (seed 000)",
    "New+Delete, get/set, scan of live records, managed heap and GC pause: class vs AllocHGlobal proxy vs TypeAllocator class and struct handles vs RecordArray; New+Delete vs raw AllocHGlobal and NativeMemory.Alloc.",
    [
        Class, PerObject, Typed, TypedUnchecked, TypedRecycled, Bulk, BulkUnchecked,
        RawHGlobal, RawNative, StructChecked, StructUnchecked, ClassDirect
    ], Class, quickSeconds: 15)
{
    private const string Class = "class instances";
    private const string PerObject = "AllocHGlobal per object";
    private const string Typed = "TypeAllocator";
    private const string TypedUnchecked = "TypeAllocator unchecked";
    private const string TypedRecycled = "TypeAllocator unchecked, recycled handles";
    private const string Bulk = "RecordArray (bulk)";
    private const string BulkUnchecked = "RecordArray unchecked";
    private const string RawHGlobal = "raw AllocHGlobal+FreeHGlobal";
    private const string RawNative = "raw NativeMemory.Alloc+Free";
    private const string StructChecked = "struct handle (FooDataRef), held heap";
    private const string StructUnchecked = "struct handle unchecked (FooDataUncheckedRef), held heap";
    private const string ClassDirect = "sealed class, direct";

    /// <inheritdoc/>
    public override Claim Claim => new(
        "IFooData as a 21-byte native record (Bar @0, Jar @4, Car @12, Tar @20: long and double misaligned), one AllocHGlobal per object: the data lives off the GC heap", null,
        // Judged on the library's weakest path, not its best: a per-object handle that weighs more on the collector than
        // the class it replaces breaks the claim even while the bulk path keeps it (each path is also a target below).
        new Metric("GC weight, class instances ÷ the weakest library path (per-object handles or RecordArray; the smaller of the bytes-per-record and full gen-2 pause ratios)", Unit.Ratio,
            f => Math.Min(GcAdvantage(f, Typed), GcAdvantage(f, Bulk))));

    /// <summary>How many times lighter on the collector <paramref name="variant"/>'s live set is than the class set's: the smaller of the bytes and pause ratios.</summary>
    private static double GcAdvantage(Figures f, string variant)
        => Math.Min(f.Median(Class, Op("heap")) / Math.Max(f.Median(variant, Op("heap")) ?? double.NaN, 1e-3) ?? double.NaN,
            f.Median(Class, Op("full-gc")) / f.Median(variant, Op("full-gc")) ?? double.NaN);
    /// <inheritdoc/>
    public override IReadOnlyList<Target> Targets =>
    [
        Target.AtLeast(Metric.TimesBetter("New+Delete vs AllocHGlobal+FreeHGlobal per object (checked)", Typed, PerObject, Op("new+delete")), 3),
        Target.AtLeast(Metric.TimesBetter("New+Delete vs AllocHGlobal+FreeHGlobal per object (unchecked, recycled handles)", TypedRecycled, PerObject, Op("new+delete")), 3),
        Target.AtMost("get+set time vs a managed class through the interface (checked)", Unit.Ratio, f => f.Median(Typed, Op("get+set")) / f.Median(Class, Op("get+set")), 1.3),
        Target.AtLeast("bulk scan+update speed vs a managed class array (largest record count, checked)", Unit.Ratio, f => f.TimesBetter(Bulk, Class, LargestScan(f.All)), 1),
        Target.AtLeast(Metric.TimesBetter("New+Delete vs raw AllocHGlobal+FreeHGlobal (struct handle, unchecked, held heap)", StructUnchecked, RawHGlobal, Op("new+delete")), 3),
        Target.AtLeast(Metric.TimesBetter("New+Delete vs raw AllocHGlobal+FreeHGlobal (struct handle, checked, held heap)", StructChecked, RawHGlobal, Op("new+delete")), 1.5),
        // What the checks cost, judged against our own unchecked path in the same run (the raw pair's time moves with the C library).
        Target.AtMost("New+Delete time, checked ÷ unchecked struct handle (held heap)", Unit.Ratio,
            f => f.Median(StructChecked, Op("new+delete")) / f.Median(StructUnchecked, Op("new+delete")), 1.5),
        Target.AtMost("get+set time vs a sealed class, both direct (struct handle, checked)", Unit.Ratio, f => f.Median(StructChecked, Op("get+set")) / f.Median(ClassDirect, Op("get+set")), 1.2),
        Target.AtMost("get+set time vs a sealed class, both direct (struct handle, unchecked)", Unit.Ratio, f => f.Median(StructUnchecked, Op("get+set")) / f.Median(ClassDirect, Op("get+set")), 1.05),
        Target.AtLeast(Metric.TimesBetter("New+Delete vs raw AllocHGlobal+FreeHGlobal (per-object handle, checked)", Typed, RawHGlobal, Op("new+delete")), 1),
        Target.AtLeast(Metric.TimesBetter("New+Delete vs raw AllocHGlobal+FreeHGlobal (per-object handle, unchecked)", TypedUnchecked, RawHGlobal, Op("new+delete")), 1),
        Target.AtMost("per-object handles: managed bytes per live record vs class instances", Unit.Ratio, f => f.Median(Typed, Op("heap")) / f.Median(Class, Op("heap")), 1),
        Target.AtMost("per-object handles: full gen-2 pause with the records alive vs class instances", Unit.Ratio, f => f.Median(Typed, Op("full-gc")) / f.Median(Class, Op("full-gc")), 1),
        Target.AtMost("RecordArray: full gen-2 pause with the records alive vs class instances", Unit.Ratio, f => f.Median(Bulk, Op("full-gc")) / f.Median(Class, Op("full-gc")), 0.1),
        Target.AtMost("managed bytes allocated by the bulk scans (all samples)", Unit.Bytes,
            f => f.All.Where(m => m.Variant == Bulk && Op("scan")(m)).Select(m => (double?)m.AllocatedBytes).DefaultIfEmpty(null).Sum(), 1024),
    ];

    private static Func<Measurement, bool> Op(string op) => m => m.Parameters.Is("op", op);

    /// <summary>The get+set variants a target reads; the others' get+set is measured where <see cref="RunSettings.MeasuresUnjudged"/>.</summary>
    private static readonly HashSet<string> GetSetJudged = [Class, Typed, ClassDirect, StructChecked, StructUnchecked];

    /// <summary>Scans at the largest record count the bulk path measured (quick mode: the target's 10M beside the 1M of every variant).</summary>
    private static Func<Measurement, bool> LargestScan(IEnumerable<Measurement> all)
    {
        long Records(Measurement m) => m.Parameters.TryGetValue("records", out var v) ? v.AsLong() : -1;
        long largest = all.Where(m => m.Variant == Bulk && Op("scan")(m)).Select(Records).DefaultIfEmpty(-1).Max();
        return m => Op("scan")(m) && Records(m) == largest;
    }
    /// <inheritdoc/>
    /// <remarks>
    /// Struct handles are the path to recommend for a live set; the weakest path (per-object class handles or the
    /// RecordArray, whichever weighs more) stands beside them so the figure cannot flatter the library.
    /// </remarks>
    public override Headline Headline => new(
        new Metric("struct handles (FooDataRef): full gen-2 pause with the records alive, share of class instances' (lower is better)", Unit.Ratio,
            f => f.Median(StructChecked, Op("full-gc")) / f.Median(Class, Op("full-gc"))),
        new Metric("weakest path (per-object handles or RecordArray): the same share", Unit.Ratio,
            f => Math.Max(f.Median(Typed, Op("full-gc")) / f.Median(Class, Op("full-gc")) ?? double.NaN, f.Median(Bulk, Op("full-gc")) / f.Median(Class, Op("full-gc")) ?? double.NaN)));

    /// <summary>The bulk scan's target is judged at 10M records: a set far larger than the processor's caches, so the scan measures memory traffic, not cache hits.</summary>
    private const int TargetRecords = 10_000_000;

    private static int Records(RunSettings s) => s.IsSmoke ? 10_000 : s.IsQuick ? 1_000_000 : TargetRecords;

    /// <summary>Quick mode also scans at the target's size (class and checked RecordArray only): the target is stated at 10M
    /// records, and 1M records (24 MB) fit in a 32 MB L3 where 10M (240 MB) do not.</summary>
    private static bool ScansAtTarget(RunSettings s) => s.IsQuick && !s.IsSmoke;

    /// <summary>
    /// Whether this launch scans at the target's size: in quick mode only the first launch does. Filling ten million
    /// records twice took about 2 s of a launch's 7; the scan is memory traffic, which varies little between processes,
    /// so the target's interval is that one process's samples.
    /// </summary>
    private static bool ScansAtTargetHere(RunSettings s) => ScansAtTarget(s) && s.Launch == 0;

    /// <inheritdoc/>
    public override IReadOnlyList<ParameterSpec> DescribeParameters(RunSettings settings) =>
    [
        new("op", "new+delete: one pair; get+set: one read and one write through IFooData; scan: one record read and updated in a pass; heap: managed bytes per live record; full-gc: a blocking gen-2 collection with the records alive",
            ["new+delete", "get+set", "scan", "heap", "full-gc"]),
        new("records", "live records for scan, heap and full-gc (quick mode: also class and checked RecordArray scans at the target's 10M, in the first launch; "
            + $"the figures no target reads — {Class} and {RawNative} new+delete, {PerObject}, {TypedUnchecked} and {Bulk} get+set, {PerObject}'s live set, {BulkUnchecked}'s scan — in the last)",
            ScansAtTarget(settings) ? [Records(settings).ToString(System.Globalization.CultureInfo.InvariantCulture), TargetRecords.ToString(System.Globalization.CultureInfo.InvariantCulture)]
                : [Records(settings).ToString(System.Globalization.CultureInfo.InvariantCulture)]),
    ];

    /// <inheritdoc/>
    public override void Run(ExperimentContext context)
    {
        using var typed = new TypeAllocator(new TypeAllocatorOptions { Name = "typed-memory" });
        using var typedUnchecked = new TypeAllocator(new TypeAllocatorOptions { Name = "typed-memory-unchecked", Checked = false });
        using var typedRecycled = new TypeAllocator(new TypeAllocatorOptions { Name = "typed-memory-recycled", Checked = false, RecycleHandles = true });
        typed.PreGenerate(typeof(IFooData));
        typedUnchecked.PreGenerate(typeof(IFooData));
        AddLayoutTable(context);

        var pair = Parameters.Of(("op", "new+delete"));
        long sink = 0;
        Action<long> classPair = n => { for (long i = 0; i < n; i++) { IFooData f = new ManagedFoo(); f.Bar = 1; sink += f.Bar; } };
        Action<long> articlePair = n => { for (long i = 0; i < n; i++) { var f = new ArticleFoo(); f.Bar = 1; sink += f.Bar; f.Delete(); } };
        Action<long> typedPair = n => { for (long i = 0; i < n; i++) { var f = typed.New<IFooData>(); f.Bar = 1; sink += f.Bar; typed.Delete(f); } };
        Action<long> uncheckedPair = n => { for (long i = 0; i < n; i++) { var f = typedUnchecked.New<IFooData>(); f.Bar = 1; sink += f.Bar; typedUnchecked.Delete(f); } };
        Action<long> recycledPair = n => { for (long i = 0; i < n; i++) { var f = typedRecycled.New<IFooData>(); f.Bar = 1; sink += f.Bar; typedRecycled.Delete(f); } };
        Action<long> rawHGlobalPair = n => sink += RawHGlobalPairs(n);
        Action<long> rawNativePair = n => sink += RawNativePairs(n);
        Action<long> structPair = n => sink += StructPairs(typed, n);
        Action<long> structUncheckedPair = n => sink += StructUncheckedPairs(typedUnchecked, n);
        // Each get+set variant gets its own instantiation (a struct type argument), hence its own call
        // sites: a shared call site would turn polymorphic and penalise whichever variant runs later.
        var article = new ArticleFoo();
        using var one = typed.NewArray<IFooData>(1);
        var getSetBodies = new (string Variant, Action<long> Body)[]
        {
            (Class, GetSetBody<Site1>(new ManagedFoo())),
            (PerObject, GetSetBody<Site2>(article)),
            (Typed, GetSetBody<Site3>(typed.New<IFooData>())),
            (TypedUnchecked, GetSetBody<Site4>(typedUnchecked.New<IFooData>())),
            (Bulk, GetSetBody<Site5>(one.MoveTo(0))),
            (ClassDirect, ClassDirectGetSet(new ManagedFoo())),
            (StructChecked, StructGetSet(FooDataRef.New(typed))),
            (StructUnchecked, StructGetSet(FooDataUncheckedRef.New(typedUnchecked))),
        };
        // Four rounds: the bodies and the library methods they call climb tier 0 → instrumented → tier 1 before the
        // harness's short quick-mode warm-up (without this, a quick measurement of New+Delete reads 2-7x its steady state).
        Action<long>[] tiered = [classPair, articlePair, typedPair, uncheckedPair, recycledPair, rawHGlobalPair, rawNativePair, structPair, structUncheckedPair, .. getSetBodies.Select(b => b.Body)];
        TierUp.Run(context, [.. tiered.Select(body => (Action)(() => body(200)))], rounds: 4);

        // The figures no target, claim or headline reads come last, and in a quick run from its last launch only
        // (RunSettings.MeasuresUnjudged): so every launch measures what is judged in the same order, after the same steps.
        bool unjudgedHere = context.Settings.MeasuresUnjudged;
        // Every time a target divides comes from one of two comparisons, its cells sampled side by side in interleaved rounds:
        // a pair or an access takes a few nanoseconds, and measured one cell after another, a burst of outside load or a
        // clock change fell on one cell of a ratio and not the other (the interface get+set ratio read 1.07x in one quiet run
        // and 1.55x in the next with the same code in every launch). The struct-handle pairs share one operation count per
        // sample; the other cells are calibrated one by one. Rounds are a whole multiple of the cells, so each cell takes
        // every position in a round equally often.
        long pairOps = PairOperations(context.Settings, structPair, structUncheckedPair);
        (string Variant, Action<long> Body, long? Operations)[] pairCells =
        [
            (PerObject, articlePair, null), (Typed, typedPair, null), (TypedUnchecked, uncheckedPair, null), (TypedRecycled, recycledPair, null),
            (RawHGlobal, rawHGlobalPair, null), (StructChecked, structPair, pairOps), (StructUnchecked, structUncheckedPair, pairOps),
        ];
        // Two rounds per cell: about the samples these cells would take measured apart (a measurement's samples each, the
        // struct pair four times that), so sampling them together costs no run time, and the checks' cost, the narrowest
        // ratio judged, still gets 14 paired rounds a launch.
        context.Compare([.. pairCells.Select(c => (c.Variant, pair, c.Body, c.Operations))], rounds: 2 * pairCells.Length);
        var getSet = Parameters.Of(("op", "get+set"));
        var judgedGetSet = getSetBodies.Where(b => GetSetJudged.Contains(b.Variant)).ToArray();
        context.Compare([.. judgedGetSet.Select(b => (b.Variant, getSet, b.Body))], RoundsFor(judgedGetSet.Length, context.Settings.Samples));

        int count = Records(context.Settings);
        MeasureLive<Site1>(context, Class, count, () => Fill(count, _ => new ManagedFoo()), _ => { });
        MeasureLive<Site3>(context, Typed, count, () => Fill(count, _ => typed.New<IFooData>()), items => { foreach (var f in items) typed.Delete(f); });
        MeasureBulk(context, typed, count, Bulk, everything: true);
        MeasureStructLive(context, typed, count);
        if (ScansAtTargetHere(context.Settings))
        {
            MeasureClassScan(context, TargetRecords);
            MeasureBulk(context, typed, TargetRecords, Bulk, everything: false);
        }
        if (unjudgedHere)
        {
            context.Measure(Class, classPair, pair);
            context.Measure(RawNative, rawNativePair, pair);
            foreach (var (variant, body) in getSetBodies.Where(b => !GetSetJudged.Contains(b.Variant))) context.Measure(variant, body, getSet);
            MeasureLive<Site2>(context, PerObject, count, () => Fill(count, _ => new ArticleFoo()), items => { foreach (var f in items) ((ArticleFoo)f).Delete(); });
            MeasureBulk(context, typedUnchecked, count, BulkUnchecked, everything: false);
        }
        article.Delete();
        GC.KeepAlive(sink);
        context.Note("TypeAllocator and the bulk path allocate zeroed, naturally aligned records from a NativeSlabAllocator; the article's class calls AllocHGlobal(21) per object and leaves memory uninitialised.");
    }

    /// <summary>The fewest rounds, a whole multiple of <paramref name="cells"/>, that give each cell at least <paramref name="samples"/> samples.</summary>
    internal static int RoundsFor(int cells, int samples) => cells * Math.Max(1, (samples + cells - 1) / cells);

    /// <summary>
    /// One operation count per sample for both struct-handle pairs: the sample target over the faster pair's best time per
    /// operation in five pilot runs of each. Calibrated one by one, a body's count came from a single run, and a run slowed
    /// by the scheduler or a compile once gave the checked pair 7,000 operations a sample against the unchecked pair's
    /// 700,000: the short samples slipped between preemptions, the long ones did not, and the launch read 0.1x. With one
    /// count from the best runs, both cells' samples are alike in length (the checked ones longer by the checks' cost).
    /// </summary>
    internal static long PairOperations(RunSettings settings, Action<long> checkedPair, Action<long> uncheckedPair)
    {
        var minimum = settings.SampleTarget / 8;
        double fastest = Math.Min(
            Pilot.NsPerOp(checkedPair, startOperations: 1024, minimum, runs: 5),
            Pilot.NsPerOp(uncheckedPair, startOperations: 1024, minimum, runs: 5));
        return (long)Math.Clamp(settings.SampleTarget.TotalNanoseconds / Math.Max(fastest, 0.01), 1, 1L << 40);
    }

    /// <summary>What a record's New+Delete replaces at its lowest: one system allocation of the record's 24 bytes, one write, one read, one free.</summary>
    private static unsafe long RawHGlobalPairs(long n)
    {
        long sum = 0;
        for (long i = 0; i < n; i++)
        {
            int* p = (int*)Marshal.AllocHGlobal(24);
            *p = 1;
            sum += *p;
            Marshal.FreeHGlobal((nint)p);
        }
        return sum;
    }

    /// <summary>As <see cref="RawHGlobalPairs"/> through NativeMemory.Alloc and NativeMemory.Free (malloc and free here).</summary>
    private static unsafe long RawNativePairs(long n)
    {
        long sum = 0;
        for (long i = 0; i < n; i++)
        {
            int* p = (int*)NativeMemory.Alloc(24);
            *p = 1;
            sum += *p;
            NativeMemory.Free(p);
        }
        return sum;
    }

    // The measured bodies and the layout table (the record and its two anchors: src/Manaloc.Lab.Subjects/FooData.cs).
    private static IFooData[] Fill(int count, Func<int, IFooData> make)
    {
        var items = new IFooData[count];
        for (int i = 0; i < count; i++) { items[i] = make(i); items[i].Bar = i; }
        return items;
    }

    private static Action<long> GetSetBody<TSite>(IFooData f) where TSite : struct
        => n => { for (long i = 0; i < n; i++) f.Bar = f.Bar + 1; };

    /// <summary>A sealed class through its own type (no interface call): what a struct handle's direct access is compared with.</summary>
    private static Action<long> ClassDirectGetSet(ManagedFoo f) => n =>
    {
        var local = f;
        for (long i = 0; i < n; i++) local.Bar = local.Bar + 1;
    };

    /// <summary>A generated struct handle through its own members (no boxing), from a local so the JIT keeps it in registers.</summary>
    private static Action<long> StructGetSet(FooDataRef r) => n =>
    {
        var local = r;
        for (long i = 0; i < n; i++) local.Bar = local.Bar + 1;
    };

    /// <inheritdoc cref="StructGetSet(FooDataRef)"/>
    private static Action<long> StructGetSet(FooDataUncheckedRef r) => n =>
    {
        var local = r;
        for (long i = 0; i < n; i++) local.Bar = local.Bar + 1;
    };

    /// <summary>Checked struct handles through the thread's held heap: New, one write, one read, Delete.</summary>
    /// <remarks>
    /// The two pair loops whose ratio is the checks' cost are compiled fully optimised at their first call
    /// (AggressiveOptimization): no tier 0, no on-stack replacement and no profile, so every launch times the same code
    /// for both, with the library's fast paths inlined and its layout constants folded. Under tiering, when each loop's
    /// tier-1 code arrived and whether it was compiled with the run's profile or a synthesized one differed from one
    /// process to the next (an on-stack-replaced loop in one launch of ten).
    /// </remarks>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private static long StructPairs(TypeAllocator typed, long n)
    {
        var heap = typed.GetThreadHeap();
        long sum = 0;
        for (long i = 0; i < n; i++)
        {
            var f = FooDataRef.New(heap);
            f.Bar = 1;
            sum += f.Bar;
            f.Delete(heap);
        }
        return sum;
    }

    /// <summary>As <see cref="StructPairs"/> with unchecked handles, compiled the same way.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private static long StructUncheckedPairs(TypeAllocator typed, long n)
    {
        var heap = typed.GetThreadHeap();
        long sum = 0;
        for (long i = 0; i < n; i++)
        {
            var f = FooDataUncheckedRef.New(heap);
            f.Bar = 1;
            sum += f.Bar;
            f.Delete(heap);
        }
        return sum;
    }

    private struct Site1;
    private struct Site2;
    private struct Site3;
    private struct Site4;
    private struct Site5;

    private static void MeasureLive<TSite>(ExperimentContext context, string variant, int count, Func<IFooData[]> build, Action<IFooData[]> free) where TSite : struct
    {
        Settle();
        long before = GC.GetTotalMemory(forceFullCollection: true);
        var items = build();
        long heap = GC.GetTotalMemory(forceFullCollection: true) - before;
        var records = Parameters.Of(("records", count));
        context.Measure(variant, n => Scan<TSite>(items, n), With(records, "scan"), fixedOperations: count);
        context.RecordSamples(variant, "B/record", [Math.Max(0, (double)heap / count)], With(records, "heap"));
        context.RecordSamples(variant, "ms", FullGcPauses(context), With(records, "full-gc"));
        free(items);
        GC.KeepAlive(items);
    }

    /// <summary>
    /// The struct handles' live set beside the class set's: managed bytes per record (the handle array only:
    /// 16 bytes a record, no object per record) and the full gen-2 pause with the records alive. The
    /// headline's figure: the path a user picks for a large live set.
    /// </summary>
    private static void MeasureStructLive(ExperimentContext context, TypeAllocator typed, int count)
    {
        Settle();
        var heap = typed.GetThreadHeap();
        long before = GC.GetTotalMemory(forceFullCollection: true);
        var items = new FooDataRef[count];
        for (int i = 0; i < count; i++)
        {
            var f = FooDataRef.New(heap);
            f.Bar = i;
            items[i] = f;
        }
        long managed = GC.GetTotalMemory(forceFullCollection: true) - before;
        var records = Parameters.Of(("records", count));
        context.RecordSamples(StructChecked, "B/record", [Math.Max(0, (double)managed / count)], With(records, "heap"));
        context.RecordSamples(StructChecked, "ms", FullGcPauses(context), With(records, "full-gc"));
        foreach (var f in items) f.Delete(heap);
        GC.KeepAlive(items);
    }

    /// <summary>The class array's scan alone (no heap or GC figures), at the same call site as the full measurement.</summary>
    /// <remarks>
    /// The fill runs in a no-GC region when the runtime grants one: the set is built in allocation order either way (a
    /// compacting GC keeps that order), but without the region its 10M objects are copied from generation to generation
    /// by the collections the fill triggers, which was most of this step's time. Nothing of the fill is measured.
    /// </remarks>
    private static void MeasureClassScan(ExperimentContext context, int count)
    {
        Settle();
        var items = FillWithoutCollections(count);
        context.Measure(Class, n => Scan<Site1>(items, n), With(Parameters.Of(("records", count)), "scan"), fixedOperations: count);
    }

    /// <summary>A managed object's bytes beside its reference in the array (ManagedFoo is 40 bytes on 64-bit) and some slack.</summary>
    private const long ClassRecordBytes = 48 + 8;

    /// <summary>The class set of <paramref name="count"/> records (Bar = index), filled in a no-GC region when the runtime grants one; the region is always ended.</summary>
    internal static IFooData[] FillWithoutCollections(int count)
        => NoGcRegion.Run(count * ClassRecordBytes + (16 << 20), () => Fill(count, _ => new ManagedFoo()));

    private static void MeasureBulk(ExperimentContext context, TypeAllocator typed, int count, string variant, bool everything)
    {
        Settle();
        long before = GC.GetTotalMemory(forceFullCollection: true);
        using var array = typed.NewArray<IFooData>(count);
        for (int i = 0; i < count; i++) array.MoveTo(i).Bar = i;
        long heap = GC.GetTotalMemory(forceFullCollection: true) - before;
        var records = Parameters.Of(("records", count));
        if (everything)
        {
            context.Measure(variant, n => ScanBulk<Site1>(array, n), With(records, "scan"), fixedOperations: count);
            context.RecordSamples(variant, "B/record", [Math.Max(0, (double)heap / count)], With(records, "heap"));
            context.RecordSamples(variant, "ms", FullGcPauses(context), With(records, "full-gc"));
        }
        else
        {
            // Site1 for the checked array's scan at the target's size: the same call site as its full measurement.
            if (variant == Bulk) context.Measure(variant, n => ScanBulk<Site1>(array, n), With(records, "scan"), fixedOperations: count);
            else context.Measure(variant, n => ScanBulk<Site2>(array, n), With(records, "scan"), fixedOperations: count);
        }
    }

    private static void Scan<TSite>(IFooData[] items, long n) where TSite : struct
    {
        for (long done = 0; done < n;)
        {
            foreach (var f in items)
            {
                f.Bar += 1;
                f.Car += f.Tar;
                if (++done == n) return;
            }
        }
    }

    private static void ScanBulk<TSite>(RecordArray<IFooData> array, long n) where TSite : struct
    {
        for (long done = 0; done < n;)
        {
            foreach (var f in array.Scan())
            {
                f.Bar += 1;
                f.Car += f.Tar;
                if (++done == n) return;
            }
        }
    }

    private static double[] FullGcPauses(ExperimentContext context)
    {
        var pauses = new double[context.IsSmoke ? 1 : 3];
        for (int i = 0; i < pauses.Length; i++)
        {
            pauses[i] = LabClock.Time(() => GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: false)).TotalMilliseconds;
        }
        return pauses;
    }

    private static void Settle()
    {
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
    }

    private static Parameters With(Parameters p, string op) => p.With("op", op);

    private static void AddLayoutTable(ExperimentContext context)
    {
        var ours = TypeLayout.Of<IFooData>();
        (string Name, string Type, int Offset, int Size)[] article = [("Bar", "int", 0, 4), ("Jar", "long", 4, 8), ("Car", "double", 12, 8), ("Tar", "byte", 20, 1)];
        var rows = article.Select(a =>
        {
            var f = ours.Fields.Single(x => x.Name == a.Name);
            bool aligned = a.Offset % f.Alignment == 0;
            return (IReadOnlyList<string>)[a.Name, a.Type, $"{a.Offset}", $"{a.Size}", aligned ? "yes" : "NO", $"{f.Offset}", $"{f.Size}", $"{f.Alignment}"];
        }).ToList();
        rows.Add(["record", "", "", "21", "", "", $"{ours.Size}", $"{ours.Alignment}"]);
        rows.Add(["padding", "", "", "0", "", "", $"{ours.Padding}", ""]);
        context.AddTable(new ResultTable("IFooData layout: the article's (Marshal.SizeOf summed in declaration order) beside TypeLayout's",
            ["property", "type", "article offset", "article size", "article aligned", "our offset", "our size", "our alignment"], rows));
    }
}
