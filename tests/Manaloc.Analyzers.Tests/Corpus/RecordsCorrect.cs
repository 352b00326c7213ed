// Correct uses of struct handles (the generated PointRef / PointUncheckedRef), moving record views and held heaps, in
// the shapes real code takes: a handle defaulted then assigned on every path or tested, a find loop that keeps the
// index, a scan that reads where it stands, a per-thread worker that takes its heap on its own thread; memory owners.
using System.IO;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;

namespace Corpus;

public sealed class HandleTable
{
    private readonly TypeAllocator _allocator = new();
    private PointRef[] _slots = new PointRef[16];
    private PointRef _current;

    // expect: none
    public PointRef Create(int x)
    {
        PointRef p = PointRef.New(_allocator);
        p.X = x;
        return p;
    }

    // expect: none
    public PointRef CreateOrDefault(bool make)
    {
        PointRef p = default;
        if (make) p = PointRef.New(_allocator);
        return p;
    }

    // expect: none
    public int ReadIfAllocated(bool make)
    {
        PointRef p = default;
        if (make) p = PointRef.New(_allocator);
        if (!p.IsAllocated) return -1;
        return p.X;
    }

    // expect: none
    public void AssignedOnEveryBranch(int mode)
    {
        PointRef p;
        switch (mode)
        {
            case 0: p = PointRef.New(_allocator); break;
            default: p = PointRef.New(_allocator); p.Y = mode; break;
        }
        p.X = 1;
        p.Delete(_allocator);
    }

    // expect: none
    public int FindWithFlag(int x)
    {
        PointRef hit = default;
        bool found = false;
        foreach (PointRef p in _slots)
        {
            if (p.IsAllocated && p.X == x) { hit = p; found = true; break; }
        }
        return found ? hit.Y : -1;
    }

    // expect: none
    public int FindWithEquals(int x)
    {
        PointRef hit = default;
        for (int i = 0; i < _slots.Length; i++)
            if (_slots[i].IsAllocated && _slots[i].X == x) hit = _slots[i];
        if (hit.Equals(default(PointRef))) return -1;
        return hit.Y;
    }

    // expect: none
    public void CreateWithCleanup(int x)
    {
        PointRef p = default;
        try
        {
            p = PointRef.New(_allocator);
            p.X = Io.Check(x) ? x : throw new ArgumentOutOfRangeException(nameof(x));
            _current = p;
        }
        catch
        {
            if (p.IsAllocated) p.Delete(_allocator);
            throw;
        }
    }

    // expect: none
    public void ResetSlot(int i)
    {
        if (_slots[i].IsAllocated) _slots[i].Delete(_allocator);
        _slots[i] = default;
    }

    // expect: none
    public bool IsEmpty() => !_current.IsAllocated && _current.Equals(default(PointRef));

    // expect: none
    public int Unchecked()
    {
        PointUncheckedRef u = default;
        u = PointUncheckedRef.New(_allocator);
        u.X = 3;
        int x = u.X;
        u.Delete(_allocator);
        return x;
    }

    // expect: none
    public void Grow()
    {
        var bigger = new PointRef[_slots.Length * 2];
        Array.Copy(_slots, bigger, _slots.Length);
        _slots = bigger;
    }

    // expect: none
    public int LoopAssigns(int n)
    {
        PointRef last = default;
        int sum = 0;
        for (int i = 0; i < n; i++)
        {
            last = PointRef.New(_allocator);
            last.X = i;
            sum += last.X;
            last.Delete(_allocator);
        }
        return sum;
    }

    // expect: none
    public Func<int> Captures()
    {
        PointRef p = default;
        Action make = () => p = PointRef.New(_allocator);
        make();
        return () => p.X;
    }

    // expect: none
    public int FromDictionary(Dictionary<int, PointRef> map, int key)
    {
        PointRef p = default;
        if (!map.TryGetValue(key, out p)) return 0;
        return p.X;
    }
}

public sealed class ViewScans
{
    private readonly TypeAllocator _allocator = new();
    private readonly List<IPoint> _kept = new();
    private readonly List<int> _xs = new();

    // expect: none
    public long Sum(RecordArray<IPoint> points)
    {
        long sum = 0;
        foreach (IPoint p in points.Scan()) sum += p.X + p.Y;
        return sum;
    }

    // expect: none
    public void Shift(RecordArray<IPoint> points, int dx)
    {
        for (int i = 0; i < points.Length; i++)
        {
            IPoint p = points.MoveTo(i);
            p.X += dx;
        }
    }

    // expect: none
    public int IndexOfMax(RecordArray<IPoint> points)
    {
        int best = -1, bestX = int.MinValue, i = 0;
        foreach (IPoint p in points.Scan())
        {
            if (p.X > bestX) { bestX = p.X; best = i; }
            i++;
        }
        return best;
    }

    // expect: none
    public IPoint? MaxAsItem(RecordArray<IPoint> points)
    {
        int best = IndexOfMax(points);
        return best < 0 ? null : points[best];
    }

    // expect: none
    public void KeepItems(RecordArray<IPoint> points)
    {
        foreach (IPoint p in points) if (p.X > 0) _kept.Add(p);
        for (int i = 0; i < points.Length; i++) if (points[i].Y > 0) _kept.Add(points[i]);
    }

    // expect: none
    public void KeepValues(RecordArray<IPoint> points)
    {
        foreach (IPoint p in points.Scan()) _xs.Add(p.X);
    }

    // expect: none
    public int FindX(RecordArray<IPoint> points, int y)
    {
        IPoint? hit = null;
        foreach (IPoint p in points.Scan())
        {
            if (p.Y == y) { hit = p; break; }
        }
        return hit?.X ?? -1;
    }

    // expect: none
    public bool Any(RecordArray<IPoint> points, int x)
    {
        foreach (IPoint p in points.Scan())
            if (p.X == x) return true;
        return false;
    }

    // expect: none
    public IPoint At(RecordArray<IPoint> points, int i) => points.MoveTo(i);

    // expect: none
    public void Print(RecordArray<IPoint> points)
    {
        IPoint v = points.View;
        Io.Use(v);
        Io.Consume(v.X);
    }

    // expect: none
    public long SecondCursor(RecordArray<IPoint> points)
    {
        RecordView<IPoint> cursor = points.CreateView();
        long sum = 0;
        foreach (IPoint p in cursor.Scan()) sum += p.X;
        sum += cursor.MoveTo(0).Y;
        return sum;
    }

    // expect: none
    public Task ScanOnWorker(RecordArray<IPoint> points) => Task.Run(() =>
    {
        RecordView<IPoint> mine = points.CreateView();
        foreach (IPoint p in mine.Scan()) Io.Consume(p.X);
    });

    // expect: none
    public int CountMatching(RecordArray<IPoint> points, int x)
    {
        int n = 0;
        foreach (IPoint p in points.Scan())
            n += _xs.FindIndex(v => v == p.X) >= 0 && p.X == x ? 1 : 0;
        return n;
    }

    // expect: none
    public void Copy(RecordArray<IPoint> from, RecordArray<IPoint> to)
    {
        int n = Math.Min(from.Length, to.Length);
        for (int i = 0; i < n; i++)
        {
            IPoint s = from.MoveTo(i);
            IPoint d = to.MoveTo(i);
            d.X = s.X;
            d.Y = s.Y;
        }
    }

    // expect: none
    public void Fill(int n)
    {
        using RecordArray<IPoint> points = _allocator.NewArray<IPoint>(n);
        int i = 0;
        foreach (IPoint p in points.Scan()) { p.X = i; p.Y = -i; i++; }
        Io.Consume(Sum(points));
    }
}

public sealed class HeapWorkers
{
    private readonly TypeAllocator _allocator = new();

    private sealed class Scratch
    {
        public int Use(TypeAllocator.ThreadHeap heap) => heap.ThreadId;
    }

    private static int Measure(TypeAllocator.ThreadHeap heap) => heap.ThreadId;

    // expect: none
    public int Borrow()
    {
        var heap = _allocator.GetThreadHeap();
        var scratch = new Scratch();
        return scratch.Use(heap) + Measure(heap);
    }

    // expect: none
    public Task PerThread() => Task.Run(() =>
    {
        var heap = _allocator.GetThreadHeap();
        var p = PointRef.New(heap);
        p.X = 1;
        p.Delete(heap);
    });

    // expect: none
    public void New(int n)
    {
        var heap = _allocator.GetThreadHeap();
        for (int i = 0; i < n; i++)
        {
            PointRef p = PointRef.New(heap);
            p.Y = i;
            p.Delete(heap);
        }
    }
}

/// <summary>Memory owners from a MemoryPool (BufferMemoryPool), in the shapes I/O code uses them.</summary>
public sealed class MemoryOwners
{
    private readonly BufferMemoryPool _pool = new();
    private IMemoryOwner<byte>? _pending;

    // expect: none
    public async Task CopyAsync(Stream from, Stream to)
    {
        using IMemoryOwner<byte> owner = _pool.Rent(4096);
        int read;
        while ((read = await from.ReadAsync(owner.Memory)) > 0)
            await to.WriteAsync(owner.Memory[..read]);
    }

    // expect: none
    public IMemoryOwner<byte> Frame(ReadOnlySpan<byte> payload)
    {
        IMemoryOwner<byte> owner = _pool.Rent(payload.Length + 4);
        try
        {
            BitConverter.TryWriteBytes(owner.Memory.Span, payload.Length);
            payload.CopyTo(owner.Memory.Span[4..]);
            return owner;
        }
        catch
        {
            owner.Dispose();
            throw;
        }
    }

    // expect: none
    public void Park(int n)
    {
        _pending?.Dispose();
        _pending = _pool.Rent(n);
    }

    // expect: none
    public int Checksum(MemoryPool<byte> pool, ReadOnlySpan<byte> data)
    {
        IMemoryOwner<byte> owner = pool.Rent(data.Length);
        try
        {
            data.CopyTo(owner.Memory.Span);
            return Io.Sum(owner.Memory.Span[..data.Length]);
        }
        finally
        {
            owner.Dispose();
        }
    }

    // expect: none
    public bool TryRent(int n, out IMemoryOwner<byte>? owner)
    {
        if (n <= 0) { owner = null; return false; }
        owner = _pool.Rent(n);
        return true;
    }
}

// A shared array's own view moved from code that runs on several threads at once, and views read where the thread that
// moved them reads them: the view is per thread, so each run reads the records it moved to.
public sealed class ConcurrentViews
{
    private readonly RecordArray<IPoint> _points;

    public ConcurrentViews(RecordArray<IPoint> points) => _points = points;

    // expect: none
    public long ParallelMoves(int n)
    {
        long total = 0;
        Parallel.For(0, n, i =>
        {
            if (i % 2 == 0) Interlocked.Add(ref total, _points.MoveTo(i).X);
            else Interlocked.Add(ref total, _points[i].Y);
        });
        return total;
    }

    // expect: none
    public async Task<int> ScanAfterAwait()
    {
        await Io.DelayAsync();
        int sum = 0;
        foreach (IPoint p in _points.Scan()) sum += p.X;
        return sum;
    }

    // expect: none
    public Task<int> MoveOnTheThreadPool(int i) => Task.Run(() =>
    {
        try { return _points.MoveTo(i).X; }
        catch (IndexOutOfRangeException) { return -1; }
        finally { Io.Consume(i); }
    });

    // expect: none
    public object Endpoint(IEndpointRouteBuilder app) => app.MapGet("/points/{id}", (int id) =>
    {
        if (id < 0) return -1;
        return _points.MoveTo(id).X;
    });

    // expect: none
    public async Task<int> MoveAfterAwait(int mode)
    {
        await Io.DelayAsync();
        switch (mode)
        {
            case 0: return _points.MoveTo(0).X;
            default: return 0;
        }
    }

    // expect: none
    public void LocalFunctionInParallel(int n)
    {
        Parallel.For(0, n, i =>
        {
            Io.Consume(Read());
            int Read() => _points.MoveTo(i).X;
        });
    }

    // expect: none
    public void CapturedArrayInParallel(RecordArray<IPoint> points)
    {
        Parallel.For(0, points.Length, i => Io.Use(points.MoveTo(i)));
    }

    // expect: none
    public async Task<int> ValueReadBeforeAwait(int i)
    {
        IPoint p = _points.MoveTo(i);
        int x = p.X;
        await Io.DelayAsync();
        return x;
    }

    // expect: none
    public async Task<int> IndexKeptAcrossAwait(int i)
    {
        await Io.DelayAsync();
        return _points.MoveTo(i).X;
    }

    // expect: none
    public async Task<int> ItemKeptAcrossAwait(int i)
    {
        IPoint p = _points[i];
        await Io.DelayAsync();
        return p.X;
    }

    // expect: none
    public async Task<int> OwnViewAcrossAwait(int i)
    {
        RecordView<IPoint> view = _points.CreateView();
        IPoint p = view.MoveTo(i);
        await Io.DelayAsync();
        return p.X;
    }
}
