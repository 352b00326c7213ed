using System.Runtime.InteropServices;
using BenchmarkDotNet.Attributes;
using Manaloc.Memory;

namespace Manaloc.Benchmarks;

/// <summary>The seed's record interface.</summary>
public interface IBenchFoo
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
/// TypeAllocator beside a managed class (anchor) and the article's AllocHGlobal-per-object proxy:
/// New+Delete, get+set through the interface, and a scan-and-update pass over live records.
/// </summary>
[MemoryDiagnoser]
public class TypeAllocatorBenchmarks
{
    private const int Records = 100_000;
    private TypeAllocator _typed = null!;
    private TypeAllocator _unchecked = null!;
    private TypeAllocator _recycled = null!;
    private IBenchFoo _class = null!;
    private IBenchFoo _record = null!;
    private IBenchFoo _uncheckedRecord = null!;
    private IBenchFoo[] _classArray = null!;
    private RecordArray<IBenchFoo> _bulk = null!;

    /// <summary>Creates the allocators and records.</summary>
    [GlobalSetup]
    public void Setup()
    {
        _typed = new TypeAllocator();
        _unchecked = new TypeAllocator(new TypeAllocatorOptions { Checked = false });
        _recycled = new TypeAllocator(new TypeAllocatorOptions { Checked = false, RecycleHandles = true });
        _class = new ManagedFoo();
        _record = _typed.New<IBenchFoo>();
        _uncheckedRecord = _unchecked.New<IBenchFoo>();
        _classArray = new IBenchFoo[Records];
        for (int i = 0; i < Records; i++) _classArray[i] = new ManagedFoo();
        _bulk = _typed.NewArray<IBenchFoo>(Records);
    }

    /// <summary>Frees everything.</summary>
    [GlobalCleanup]
    public void Cleanup()
    {
        _bulk.Dispose();
        _typed.Dispose();
        _unchecked.Dispose();
        _recycled.Dispose();
    }

    /// <summary>Anchor: a managed object per record.</summary>
    [Benchmark(Baseline = true)]
    public int NewClass()
    {
        IBenchFoo f = new ManagedFoo();
        f.Bar = 1;
        return f.Bar;
    }

    /// <summary>The article's design: AllocHGlobal(21) per object, FreeHGlobal on Delete.</summary>
    [Benchmark]
    public int NewDeleteAllocHGlobal()
    {
        var f = new ArticleFoo();
        f.Bar = 1;
        int v = f.Bar;
        f.Delete();
        return v;
    }

    /// <summary>TypeAllocator New + Delete, checked.</summary>
    [Benchmark]
    public int NewDeleteTypeAllocator()
    {
        var f = _typed.New<IBenchFoo>();
        f.Bar = 1;
        int v = f.Bar;
        _typed.Delete(f);
        return v;
    }

    /// <summary>TypeAllocator New + Delete, unchecked.</summary>
    [Benchmark]
    public int NewDeleteTypeAllocatorUnchecked()
    {
        var f = _unchecked.New<IBenchFoo>();
        f.Bar = 1;
        int v = f.Bar;
        _unchecked.Delete(f);
        return v;
    }

    /// <summary>TypeAllocator New + Delete, unchecked with recycled handles: nothing allocated on the managed heap.</summary>
    [Benchmark]
    public int NewDeleteTypeAllocatorRecycled()
    {
        var f = _recycled.New<IBenchFoo>();
        f.Bar = 1;
        int v = f.Bar;
        _recycled.Delete(f);
        return v;
    }

    /// <summary>Get + set through the interface on a managed class.</summary>
    [Benchmark]
    public int GetSetClass() => _class.Bar = _class.Bar + 1;

    /// <summary>Get + set through the interface on a checked record.</summary>
    [Benchmark]
    public int GetSetRecord() => _record.Bar = _record.Bar + 1;

    /// <summary>Get + set through the interface on an unchecked record.</summary>
    [Benchmark]
    public int GetSetRecordUnchecked() => _uncheckedRecord.Bar = _uncheckedRecord.Bar + 1;

    /// <summary>Scan and update an array of managed objects.</summary>
    [Benchmark(OperationsPerInvoke = Records)]
    public void ScanClassArray()
    {
        foreach (var f in _classArray) { f.Bar += 1; f.Car += f.Tar; }
    }

    /// <summary>Scan and update a RecordArray through its view.</summary>
    [Benchmark(OperationsPerInvoke = Records)]
    public void ScanRecordArray()
    {
        foreach (var f in _bulk) { f.Bar += 1; f.Car += f.Tar; }
    }

    private sealed class ManagedFoo : IBenchFoo
    {
        public int Bar { get; set; }
        public long Jar { get; set; }
        public double Car { get; set; }
        public byte Tar { get; set; }
    }

    private sealed unsafe class ArticleFoo : IBenchFoo
    {
        private byte* _native = (byte*)Marshal.AllocHGlobal(21);
        public int Bar { get => *(int*)_native; set => *(int*)_native = value; }
        public long Jar { get => *(long*)(_native + 4); set => *(long*)(_native + 4) = value; }
        public double Car { get => *(double*)(_native + 12); set => *(double*)(_native + 12) = value; }
        public byte Tar { get => _native[20]; set => _native[20] = value; }
        public void Delete() { Marshal.FreeHGlobal((nint)_native); _native = null; }
    }
}
