using BenchmarkDotNet.Attributes;
using Manaloc.Lab.Subjects;
using Manaloc.Memory;

namespace Manaloc.Benchmarks;

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
    private IFooData _class = null!;
    private IFooData _record = null!;
    private IFooData _uncheckedRecord = null!;
    private IFooData[] _classArray = null!;
    private RecordArray<IFooData> _bulk = null!;

    /// <summary>Creates the allocators and records.</summary>
    [GlobalSetup]
    public void Setup()
    {
        _typed = new TypeAllocator();
        _unchecked = new TypeAllocator(new TypeAllocatorOptions { Checked = false });
        _recycled = new TypeAllocator(new TypeAllocatorOptions { Checked = false, RecycleHandles = true });
        _class = new ManagedFoo();
        _record = _typed.New<IFooData>();
        _uncheckedRecord = _unchecked.New<IFooData>();
        _classArray = new IFooData[Records];
        for (int i = 0; i < Records; i++) _classArray[i] = new ManagedFoo();
        _bulk = _typed.NewArray<IFooData>(Records);
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
        IFooData f = new ManagedFoo();
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
        var f = _typed.New<IFooData>();
        f.Bar = 1;
        int v = f.Bar;
        _typed.Delete(f);
        return v;
    }

    /// <summary>TypeAllocator New + Delete, unchecked.</summary>
    [Benchmark]
    public int NewDeleteTypeAllocatorUnchecked()
    {
        var f = _unchecked.New<IFooData>();
        f.Bar = 1;
        int v = f.Bar;
        _unchecked.Delete(f);
        return v;
    }

    /// <summary>TypeAllocator New + Delete, unchecked with recycled handles: nothing allocated on the managed heap.</summary>
    [Benchmark]
    public int NewDeleteTypeAllocatorRecycled()
    {
        var f = _recycled.New<IFooData>();
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

    /// <summary>Scan and update a RecordArray through its one moving view (<c>Scan()</c>: allocation-free).</summary>
    [Benchmark(OperationsPerInvoke = Records)]
    public void ScanRecordArray()
    {
        foreach (var f in _bulk.Scan()) { f.Bar += 1; f.Car += f.Tar; }
    }

    /// <summary>Scan and update a RecordArray through its items (plain <c>foreach</c>: a 40-byte item per record, checked on each access).</summary>
    [Benchmark(OperationsPerInvoke = Records)]
    public void ScanRecordArrayItems()
    {
        foreach (var f in _bulk) { f.Bar += 1; f.Car += f.Tar; }
    }
}
