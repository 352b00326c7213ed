using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using Manaloc.Memory;

namespace Manaloc.Benchmarks;

/// <summary>
/// What the held heaps' exact thread check costs, in one run: New+Delete pairs (and Allocate+Free of the raw heap)
/// with the exact check (every call compares the current thread with the owner) beside the same code with the sampled
/// check the heaps once had (one call in 64), selected per process by an internal AppContext switch.
/// Target: the exact check costs at most 1 ns per New+Delete pair of the checked heap (exact minus sampled).
/// </summary>
[MemoryDiagnoser]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByMethod)]
public unsafe class HeapThreadCheckBenchmarks
{
    private const int Ops = 1000;
    private TypeAllocator _checked = null!;
    private TypeAllocator _unchecked = null!;
    private NativeSlabAllocator _slab = null!;

    /// <summary>False: the exact check (the library's behaviour). True: the sampled one, for comparison only.</summary>
    [Params(false, true)]
    public bool SampledThreadCheck { get; set; }

    /// <summary>Selects the check (before any heap is used in this process) and creates the allocators.</summary>
    [GlobalSetup]
    public void Setup()
    {
        AppContext.SetSwitch(HeapThreadCheck.SampledSwitch, SampledThreadCheck);
        if (HeapThreadCheck.Sampled != SampledThreadCheck) throw new InvalidOperationException("The thread check was chosen before the switch was set: the comparison would be void.");
        _checked = new TypeAllocator(new TypeAllocatorOptions { Name = "bench heap check" });
        _unchecked = new TypeAllocator(new TypeAllocatorOptions { Name = "bench heap check unchecked", Checked = false });
        _slab = new NativeSlabAllocator("bench heap check");
    }

    /// <summary>Frees everything.</summary>
    [GlobalCleanup]
    public void Cleanup()
    {
        _checked.Dispose();
        _unchecked.Dispose();
        _slab.Dispose();
    }

    /// <summary>Checked struct handle through the held heap: New, one store, Delete.</summary>
    [Benchmark(OperationsPerInvoke = Ops)]
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

    /// <summary>Unchecked struct handle through the held heap.</summary>
    [Benchmark(OperationsPerInvoke = Ops)]
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

    /// <summary>One pair per call (the loop is BenchmarkDotNet's): the thread-static base is read on every call, not hoisted.</summary>
    [Benchmark]
    public int StructCheckedHeapOnePair()
    {
        var heap = _checked.GetThreadHeap();
        var r = BenchRecordRef.New(heap);
        r.Bar = 1;
        int v = r.Bar;
        r.Delete(heap);
        return v;
    }

    /// <summary>The raw heap of a NativeSlabAllocator: Allocate(24), one store, Free.</summary>
    [Benchmark(OperationsPerInvoke = Ops)]
    public void SlabHeap()
    {
        var heap = _slab.GetThreadHeap();
        for (int i = 0; i < Ops; i++)
        {
            int* p = (int*)heap.Allocate(24);
            *p = i;
            heap.Free(p);
        }
    }
}
