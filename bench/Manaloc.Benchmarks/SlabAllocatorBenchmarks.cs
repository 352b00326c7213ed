using System.Runtime.InteropServices;
using BenchmarkDotNet.Attributes;
using Manaloc.Memory;

namespace Manaloc.Benchmarks;

/// <summary>An allocate + free pair of a small block: the system allocator (anchor), AllocHGlobal, the slab raw and checked forms.</summary>
[MemoryDiagnoser]
public unsafe class SlabAllocatorBenchmarks
{
    private NativeSlabAllocator _slab = null!;

    /// <summary>Block size in bytes.</summary>
    [Params(24, 256)]
    public int Size { get; set; }

    /// <summary>Creates the slab.</summary>
    [GlobalSetup]
    public void Setup() => _slab = new NativeSlabAllocator("bench");

    /// <summary>Frees the slab.</summary>
    [GlobalCleanup]
    public void Cleanup() => _slab.Dispose();

    /// <summary>Anchor: malloc + free.</summary>
    [Benchmark(Baseline = true)]
    public void NativeMemoryAlloc()
    {
        void* p = NativeMemory.Alloc((nuint)Size);
        *(byte*)p = 1;
        NativeMemory.Free(p);
    }

    /// <summary>Marshal.AllocHGlobal + FreeHGlobal.</summary>
    [Benchmark]
    public void AllocHGlobal()
    {
        nint p = Marshal.AllocHGlobal(Size);
        *(byte*)p = 1;
        Marshal.FreeHGlobal(p);
    }

    /// <summary>Slab, unchecked raw pointer.</summary>
    [Benchmark]
    public void SlabRaw()
    {
        void* p = _slab.Allocate((nuint)Size);
        *(byte*)p = 1;
        _slab.Free(p);
    }

    /// <summary>Slab, checked handle (not zeroed).</summary>
    [Benchmark]
    public void SlabChecked()
    {
        var block = _slab.AllocateBlock((nuint)Size, 16, zeroed: false);
        _slab.Free(block);
    }
}
