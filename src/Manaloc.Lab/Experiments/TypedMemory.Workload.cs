using System.Diagnostics;
using System.Runtime.InteropServices;
using Manaloc.Lab.Subjects;
using Manaloc.Lab.Harness;
using Manaloc.Memory;

namespace Manaloc.Lab.Experiments;

/// <summary>The measured bodies and the layout table (the record and its two anchors: src/Manaloc.Lab.Subjects/FooData.cs).</summary>
public sealed partial class TypedMemory
{
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

    /// <summary>As <see cref="StructPairs"/> with unchecked handles.</summary>
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

    /// <summary>
    /// Runs the bodies in rounds separated by pauses longer than the runtime's tiering delay, so they and
    /// the library methods they call climb tier 0 → instrumented → tier 1 before the harness's short
    /// quick-mode warm-up (without this, a quick measurement of New+Delete reads 2-7x its steady state).
    /// </summary>
    private static void WarmUpTiers(Action<long>[] bodies)
    {
        for (int round = 0; round < 4; round++)
        {
            foreach (var body in bodies)
            {
                for (int call = 0; call < 40; call++) body(200);
            }
            Thread.Sleep(120);
        }
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

    /// <summary>The class array's scan alone (no heap or GC figures), at the same call site as the full measurement.</summary>
    private static void MeasureClassScan(ExperimentContext context, int count)
    {
        Settle();
        var items = Fill(count, _ => new ManagedFoo());
        context.Measure(Class, n => Scan<Site1>(items, n), With(Parameters.Of(("records", count)), "scan"), fixedOperations: count);
    }

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
            long start = Stopwatch.GetTimestamp();
            GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: false);
            pauses[i] = Stopwatch.GetElapsedTime(start).TotalMilliseconds;
        }
        return pauses;
    }

    private static void Settle()
    {
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
    }

    private static Dictionary<string, string> With(IReadOnlyDictionary<string, string> p, string op) => new(p) { ["op"] = op };

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
