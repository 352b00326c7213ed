using BenchmarkDotNet.Attributes;
using System.Runtime.CompilerServices;
using BenchmarkDotNet.Configs;
using Manaloc.Lab.Subjects;
using Manaloc.Memory;

namespace Manaloc.Benchmarks;

/// <summary>
/// What the per-thread moving view of a <see cref="RecordArray{T}"/> costs, in one run: <c>MoveTo(i).Bar</c> on the thread
/// that created the array and on another thread (the array is created on a thread of its own, so the benchmark's thread is
/// "another thread" to it), beside the floor (the same field of the same record read through a raw pointer: no view, no
/// check), a <see cref="RecordArray{T}.CreateView"/> view the caller holds (the same bounds and disposal checks with no
/// thread lookup: what <c>MoveTo</c> cost when one view served every thread, before views were per thread), and that
/// view found through a <see cref="ThreadLocal{T}"/> (the first per-thread design's lookup, for the ratio). One move and
/// one read per call (a request's lookup), and a loop of <see cref="Ops"/> (a loop by index, where the JIT may hoist what
/// does not change). Target: on either thread, within 2 ns of the held view per move.
/// </summary>
[MemoryDiagnoser]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByCategory)]
[CategoriesColumn]
[MinColumn] // on a busy machine the fastest iteration is the one least interrupted
public unsafe class RecordViewBenchmarks
{
    private const int Records = 4096; // a power of two: the next index is a mask away
    private const int Ops = 1000;
    private const int Step = 617; // odd: visits every record, not in order

    private TypeAllocator _allocator = null!;
    private RecordArray<IFooData> _mine = null!;
    private RecordArray<IFooData> _foreign = null!;
    private RecordView<IFooData> _held = null!;
    private ThreadLocal<RecordView<IFooData>> _threadLocal = null!;
    private byte* _base;
    private nint _stride;
    private nint _barOffset;
    private int _next;

    /// <summary>The arrays (one made here, one on a thread of its own), numbered records, and the floor's pointer.</summary>
    [GlobalSetup]
    public void Setup()
    {
        _allocator = new TypeAllocator(new TypeAllocatorOptions { Name = "bench record views" });
        _mine = Numbered(_allocator.NewArray<IFooData>(Records));
        RecordArray<IFooData>? made = null;
        var creator = new Thread(() => made = Numbered(_allocator.NewArray<IFooData>(Records)));
        creator.Start();
        creator.Join();
        _foreign = made!;
        _held = _mine.CreateView();
        _threadLocal = new ThreadLocal<RecordView<IFooData>>(_mine.CreateView);
        _base = ((NativeRecord)(object)_mine.MoveTo(0)).Address;
        _stride = _mine.Stride;
        _barOffset = TypeLayout.Of<IFooData>().Fields.Single(f => f.Name == nameof(IFooData.Bar)).Offset;
        int floor = Floor();
        _next = 0;
        if (floor != Held() || floor != Step) throw new InvalidOperationException("The floor reads other records than the views: the comparison would be void.");
        _next = 0;
    }

    private static RecordArray<IFooData> Numbered(RecordArray<IFooData> array)
    {
        for (int i = 0; i < array.Length; i++) array.MoveTo(i).Bar = i;
        return array;
    }

    /// <summary>Frees the arrays.</summary>
    [GlobalCleanup]
    public void Cleanup()
    {
        _threadLocal.Dispose();
        _allocator.Dispose();
    }

    private int NextIndex() => _next = (_next + Step) & (Records - 1);

    /// <summary>Floor: the record's field through a raw pointer.</summary>
    [Benchmark(Baseline = true), BenchmarkCategory("call")]
    public int Floor() => *(int*)(_base + NextIndex() * _stride + _barOffset);

    /// <summary>A view the caller holds (<c>CreateView()</c>): the move's checks with no thread lookup.</summary>
    [Benchmark, BenchmarkCategory("call")]
    public int Held() => _held.MoveTo(NextIndex()).Bar;

    /// <summary>The held view behind the cheapest check of which thread calls (a thread-static key compared with the owner's):
    /// the floor of any rule that gives each thread its own view or refuses a second thread, as a moving view must.</summary>
    [Benchmark, BenchmarkCategory("call")]
    public int HeldThreadChecked()
    {
        CheckThread();
        return _held.MoveTo(NextIndex()).Bar;
    }

    [ThreadStatic]
    private static int t_threadKey;
    private int _ownerKey = 1;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void CheckThread()
    {
        int key = t_threadKey;
        if (key != _ownerKey) Claim(key);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void Claim(int key)
    {
        if (key != 0) throw new InvalidOperationException("another thread owns the held view");
        t_threadKey = _ownerKey;
    }

    /// <summary>The held view found through a <see cref="ThreadLocal{T}"/>: the lookup per-thread views first had.</summary>
    [Benchmark, BenchmarkCategory("call")]
    public int ThreadLocalView() => _threadLocal.Value!.MoveTo(NextIndex()).Bar;

    /// <summary><c>array.MoveTo(i).Bar</c> on the thread that created the array.</summary>
    [Benchmark, BenchmarkCategory("call")]
    public int CreatingThread() => _mine.MoveTo(NextIndex()).Bar;

    /// <summary><c>array.MoveTo(i).Bar</c> on another thread than the array's creator.</summary>
    [Benchmark, BenchmarkCategory("call")]
    public int OtherThread() => _foreign.MoveTo(NextIndex()).Bar;

    /// <summary>Floor of the loops.</summary>
    [Benchmark(Baseline = true, OperationsPerInvoke = Ops), BenchmarkCategory("loop")]
    public int FloorLoop()
    {
        int sum = 0, index = _next;
        for (int i = 0; i < Ops; i++)
        {
            index = (index + Step) & (Records - 1);
            sum += *(int*)(_base + index * _stride + _barOffset);
        }
        _next = index;
        return sum;
    }

    /// <summary>A loop of moves of the held view (no thread lookup).</summary>
    [Benchmark(OperationsPerInvoke = Ops), BenchmarkCategory("loop")]
    public int HeldLoop()
    {
        int sum = 0, index = _next;
        var held = _held;
        for (int i = 0; i < Ops; i++)
        {
            index = (index + Step) & (Records - 1);
            sum += held.MoveTo(index).Bar;
        }
        _next = index;
        return sum;
    }

    /// <summary>A loop of moves of the held view, each behind the thread check (the floor of a per-thread rule).</summary>
    [Benchmark(OperationsPerInvoke = Ops), BenchmarkCategory("loop")]
    public int HeldThreadCheckedLoop()
    {
        int sum = 0, index = _next;
        var held = _held;
        for (int i = 0; i < Ops; i++)
        {
            index = (index + Step) & (Records - 1);
            CheckThread();
            sum += held.MoveTo(index).Bar;
        }
        _next = index;
        return sum;
    }

    /// <summary>A loop of moves on the creating thread.</summary>
    [Benchmark(OperationsPerInvoke = Ops), BenchmarkCategory("loop")]
    public int CreatingThreadLoop() => Loop(_mine);

    /// <summary>A loop of moves on another thread.</summary>
    [Benchmark(OperationsPerInvoke = Ops), BenchmarkCategory("loop")]
    public int OtherThreadLoop() => Loop(_foreign);

    private int Loop(RecordArray<IFooData> array)
    {
        int sum = 0, index = _next;
        for (int i = 0; i < Ops; i++)
        {
            index = (index + Step) & (Records - 1);
            sum += array.MoveTo(index).Bar;
        }
        _next = index;
        return sum;
    }
}
