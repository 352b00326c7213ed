using System.Runtime.InteropServices;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using Manaloc.Memory;

namespace Manaloc.Benchmarks;

/// <summary>The seed's record interface, compiled by the Manaloc source generator.</summary>
[NativeRecord]
public interface IBenchRecord
{
    /// <summary>An int.</summary>
    int Bar { get; set; }
    /// <summary>A long.</summary>
    long Jar { get; set; }
    /// <summary>A double.</summary>
    double Car { get; set; }
    /// <summary>A byte.</summary>
    byte Tar { get; set; }
}

/// <summary>
/// Struct handles of a [NativeRecord] interface against what they replace, per operation (loops of
/// <see cref="Ops"/>): New+Delete beside a raw AllocHGlobal+FreeHGlobal pair (the baseline), NativeMemory.Alloc+Free,
/// the compiled class handle and a managed <c>new</c>; get+set beside a sealed class's property (the baseline).
/// Targets (ratios to the anchors of the same run, so they hold on any machine): New+Delete unchecked ≥ 3x raw, checked ≥ 1.5x; get+set checked ≤ 1.2x the class, unchecked ≤ 1.05x.
/// </summary>
[MemoryDiagnoser]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByCategory)]
[CategoriesColumn]
public class StructHandleBenchmarks
{
    private const int Ops = 1000;
    private TypeAllocator _checked = null!;
    private TypeAllocator _unchecked = null!;
    private BenchRecordRef _ref;
    private BenchRecordUncheckedRef _uncheckedRef;
    private BenchClass _class = null!;

    /// <summary>Creates the allocators and one record of each kind.</summary>
    [GlobalSetup]
    public void Setup()
    {
        _checked = new TypeAllocator();
        _unchecked = new TypeAllocator(new TypeAllocatorOptions { Checked = false });
        _ref = BenchRecordRef.New(_checked);
        _uncheckedRef = BenchRecordUncheckedRef.New(_unchecked);
        _class = new BenchClass();
    }

    /// <summary>Frees everything.</summary>
    [GlobalCleanup]
    public void Cleanup()
    {
        _checked.Dispose();
        _unchecked.Dispose();
    }

    /// <summary>Raw AllocHGlobal of the record's 24 bytes, one store, FreeHGlobal.</summary>
    [Benchmark(Baseline = true, OperationsPerInvoke = Ops), BenchmarkCategory("New+Delete")]
    public unsafe void RawAllocHGlobal()
    {
        for (int i = 0; i < Ops; i++)
        {
            nint p = Marshal.AllocHGlobal(24);
            *(int*)p = i;
            Marshal.FreeHGlobal(p);
        }
    }

    /// <summary>NativeMemory.Alloc of 24 bytes, one store, Free.</summary>
    [Benchmark(OperationsPerInvoke = Ops), BenchmarkCategory("New+Delete")]
    public unsafe void RawNativeMemory()
    {
        for (int i = 0; i < Ops; i++)
        {
            void* p = NativeMemory.Alloc(24);
            *(int*)p = i;
            NativeMemory.Free(p);
        }
    }

    /// <summary>Checked struct handle: New (zeroed, stamped, tagged), one store, Delete.</summary>
    [Benchmark(OperationsPerInvoke = Ops), BenchmarkCategory("New+Delete")]
    public void StructChecked()
    {
        var allocator = _checked;
        for (int i = 0; i < Ops; i++)
        {
            var r = BenchRecordRef.New(allocator);
            r.Bar = i;
            r.Delete(allocator);
        }
    }

    /// <summary>Unchecked struct handle: New, one store, Delete.</summary>
    [Benchmark(OperationsPerInvoke = Ops), BenchmarkCategory("New+Delete")]
    public void StructUnchecked()
    {
        var allocator = _unchecked;
        for (int i = 0; i < Ops; i++)
        {
            var r = BenchRecordUncheckedRef.New(allocator);
            r.Bar = i;
            r.Delete(allocator);
        }
    }

    /// <summary>Checked struct handle through the thread's held heap (no thread-static lookup per call).</summary>
    [Benchmark(OperationsPerInvoke = Ops), BenchmarkCategory("New+Delete")]
    public void StructCheckedHeap()
    {
        var heap = _checked.GetThreadHeap();
        for (int i = 0; i < Ops; i++)
        {
            var r = BenchRecordRef.New(heap);
            r.Bar = i;
            r.Delete(heap);
        }
    }

    /// <summary>Unchecked struct handle through the thread's held heap.</summary>
    [Benchmark(OperationsPerInvoke = Ops), BenchmarkCategory("New+Delete")]
    public void StructUncheckedHeap()
    {
        var heap = _unchecked.GetThreadHeap();
        for (int i = 0; i < Ops; i++)
        {
            var r = BenchRecordUncheckedRef.New(heap);
            r.Bar = i;
            r.Delete(heap);
        }
    }

    /// <summary>The compiled class handle from New&lt;T&gt; (checked allocator): a managed handle per record.</summary>
    [Benchmark(OperationsPerInvoke = Ops), BenchmarkCategory("New+Delete")]
    public void ClassHandleChecked()
    {
        var allocator = _checked;
        for (int i = 0; i < Ops; i++)
        {
            var r = allocator.New<IBenchRecord>();
            r.Bar = i;
            allocator.Delete(r);
        }
    }

    /// <summary>A managed object (what the records replace), left to the GC.</summary>
    [Benchmark(OperationsPerInvoke = Ops), BenchmarkCategory("New+Delete")]
    public int ManagedNew()
    {
        int sum = 0;
        for (int i = 0; i < Ops; i++)
        {
            var c = new BenchClass { Bar = i };
            sum += c.Bar;
        }
        return sum;
    }

    /// <summary>Get+set of a sealed class's auto-property.</summary>
    [Benchmark(Baseline = true, OperationsPerInvoke = Ops), BenchmarkCategory("Get+Set")]
    public int ClassGetSet()
    {
        var c = _class;
        for (int i = 0; i < Ops; i++) c.Bar = c.Bar + i;
        return c.Bar;
    }

    /// <summary>Get+set through a checked struct handle (a stamp compare per access).</summary>
    [Benchmark(OperationsPerInvoke = Ops), BenchmarkCategory("Get+Set")]
    public int StructCheckedGetSet()
    {
        var r = _ref;
        for (int i = 0; i < Ops; i++) r.Bar = r.Bar + i;
        return r.Bar;
    }

    /// <summary>Get+set through an unchecked struct handle (bare loads and stores).</summary>
    [Benchmark(OperationsPerInvoke = Ops), BenchmarkCategory("Get+Set")]
    public int StructUncheckedGetSet()
    {
        var r = _uncheckedRef;
        for (int i = 0; i < Ops; i++) r.Bar = r.Bar + i;
        return r.Bar;
    }

    /// <summary>The managed class the records replace.</summary>
    public sealed class BenchClass
    {
        /// <summary>An int.</summary>
        public int Bar { get; set; }
        /// <summary>A long.</summary>
        public long Jar { get; set; }
        /// <summary>A double.</summary>
        public double Car { get; set; }
        /// <summary>A byte.</summary>
        public byte Tar { get; set; }
    }
}
