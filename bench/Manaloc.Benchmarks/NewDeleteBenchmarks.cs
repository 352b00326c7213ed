using System.Runtime.InteropServices;
using BenchmarkDotNet.Attributes;
using Manaloc.Lab.Subjects;
using Manaloc.Memory;

namespace Manaloc.Benchmarks;

/// <summary>
/// One record's New+Delete (a 24-byte record, one field written and read) against the raw system calls it replaces:
/// Marshal.AllocHGlobal+FreeHGlobal (anchor) and NativeMemory.Alloc+Free, beside TypeAllocator's per-object handles
/// (checked, unchecked) and the lab's 16-byte struct handle.
/// </summary>
[MemoryDiagnoser]
public unsafe class NewDeleteBenchmarks
{
    private TypeAllocator _checked = null!;
    private TypeAllocator _unchecked = null!;

    /// <summary>Creates the allocators and generates the record type.</summary>
    [GlobalSetup]
    public void Setup()
    {
        _checked = new TypeAllocator(new TypeAllocatorOptions { Name = "bench new+delete" });
        _unchecked = new TypeAllocator(new TypeAllocatorOptions { Name = "bench new+delete unchecked", Checked = false });
        _checked.PreGenerate(typeof(Manaloc.Lab.Subjects.IFooData));
        _unchecked.PreGenerate(typeof(Manaloc.Lab.Subjects.IFooData));
    }

    /// <summary>Frees the allocators.</summary>
    [GlobalCleanup]
    public void Cleanup()
    {
        _checked.Dispose();
        _unchecked.Dispose();
    }

    /// <summary>Anchor: raw AllocHGlobal(24) + FreeHGlobal.</summary>
    [Benchmark(Baseline = true)]
    public int RawAllocHGlobal()
    {
        int* p = (int*)Marshal.AllocHGlobal(24);
        *p = 1;
        int v = *p;
        Marshal.FreeHGlobal((nint)p);
        return v;
    }

    /// <summary>Raw NativeMemory.Alloc(24) + Free.</summary>
    [Benchmark]
    public int RawNativeMemoryAlloc()
    {
        int* p = (int*)NativeMemory.Alloc(24);
        *p = 1;
        int v = *p;
        NativeMemory.Free(p);
        return v;
    }

    /// <summary>TypeAllocator New + Delete, checked: a managed handle object per record.</summary>
    [Benchmark]
    public int TypeAllocatorChecked()
    {
        var f = _checked.New<Manaloc.Lab.Subjects.IFooData>();
        f.Bar = 1;
        int v = f.Bar;
        _checked.Delete(f);
        return v;
    }

    /// <summary>TypeAllocator New + Delete, unchecked.</summary>
    [Benchmark]
    public int TypeAllocatorUnchecked()
    {
        var f = _unchecked.New<Manaloc.Lab.Subjects.IFooData>();
        f.Bar = 1;
        int v = f.Bar;
        _unchecked.Delete(f);
        return v;
    }

    /// <summary>The generated 16-byte checked struct handle, through the thread's held heap: no managed object.</summary>
    [Benchmark]
    public int StructHandle()
    {
        var heap = _checked.GetThreadHeap();
        var f = Manaloc.Lab.Subjects.FooDataRef.New(heap);
        f.Bar = 1;
        int v = f.Bar;
        f.Delete(heap);
        return v;
    }
}
