// Seeded misuses: every rule through if/else, a loop, try/catch/finally, an early return, a switch, a local function and
// a lambda. Each method names the rule it must draw and nothing else.
using System.IO;
using Microsoft.Extensions.ObjectPool;

namespace Corpus;

public sealed class Misuse
{
    private readonly BufferManager _buffers = new();
    private readonly IObjectPool<Payload> _pool = new LockedPool<Payload>(() => new Payload());
    private readonly ObjectPool<Payload> _msPool = new DefaultObjectPool<Payload>(new DefaultPooledObjectPolicy<Payload>());
    private readonly TypeAllocator _allocator = new();
    private readonly SlimReaderWriterLock _lock = new();
    private TypeAllocator.ThreadHeap? _heap;
    private int _value;

    // ------------------------------------------------------------------ MNL101

    // expect: MNL101
    public void Mnl101_IfElse(int n, bool c)
    {
        byte[] a = ArrayPool<byte>.Shared.Rent(n);
        if (c) ArrayPool<byte>.Shared.Return(a);
        else a[0] = 1;
    }

    // expect: MNL101
    public void Mnl101_Loop(int count)
    {
        for (int i = 0; i < count; i++)
        {
            byte[] a = ArrayPool<byte>.Shared.Rent(64);
            if (i % 2 == 0) continue;
            a[0] = 1;
            ArrayPool<byte>.Shared.Return(a);
        }
    }

    // expect: MNL101
    public void Mnl101_TryCatchFinally(Stream s, int n)
    {
        // Returned only when the read fails: a read that succeeds keeps the array forever.
        byte[] a = ArrayPool<byte>.Shared.Rent(n);
        try { Io.Read(s, a, n); }
        catch (IOException) { ArrayPool<byte>.Shared.Return(a); throw; }
    }

    // expect: MNL101
    public int Mnl101_PassedToABorrower(Stream s, int n)
    {
        // Io.Read uses the array and keeps nothing: the duty to return it stays here.
        byte[] a = ArrayPool<byte>.Shared.Rent(n);
        return Io.Read(s, a, n);
    }

    // expect: MNL101
    public void Mnl101_EarlyReturn(int n)
    {
        byte[] a = ArrayPool<byte>.Shared.Rent(n);
        if (n > 100) return;
        a[0] = 1;
        ArrayPool<byte>.Shared.Return(a);
    }

    // expect: MNL101
    public void Mnl101_Switch(int n, int mode)
    {
        char[] a = ArrayPool<char>.Shared.Rent(n);
        switch (mode)
        {
            case 0: ArrayPool<char>.Shared.Return(a); break;
            case 1: a[0] = 'x'; break;
            default: ArrayPool<char>.Shared.Return(a); break;
        }
    }

    // expect: MNL101
    public void Mnl101_LocalFunction(int n)
    {
        Fill(n);
        static void Fill(int size)
        {
            byte[] a = ArrayPool<byte>.Shared.Rent(size);
            a[0] = 1;
        }
    }

    // expect: MNL101
    public void Mnl101_Lambda(List<int> sizes)
    {
        sizes.ForEach(n =>
        {
            int[] a = ArrayPool<int>.Shared.Rent(n);
            a[0] = n;
        });
    }

    // expect: MNL101
    public void Mnl101_Discarded(int n)
    {
        ArrayPool<byte>.Shared.Rent(n);
    }

    // expect: MNL101
    public void Mnl101_Overwritten(int n)
    {
        byte[] a = ArrayPool<byte>.Shared.Rent(n);
        a[0] = 1;
        a = ArrayPool<byte>.Shared.Rent(n * 2);
        ArrayPool<byte>.Shared.Return(a);
    }

    // ------------------------------------------------------------------ MNL102

    // expect: MNL102
    public void Mnl102_IfElse(int n, bool c)
    {
        byte[] a = ArrayPool<byte>.Shared.Rent(n);
        ArrayPool<byte>.Shared.Return(a);
        if (c) a[0] = 1;
        else Io.Consume(n);
    }

    // expect: MNL102
    public void Mnl102_Loop(int n)
    {
        byte[] a = ArrayPool<byte>.Shared.Rent(n);
        ArrayPool<byte>.Shared.Return(a);
        for (int i = 0; i < n; i++) a[i] = 0;
    }

    // expect: MNL102
    public int Mnl102_TryCatchFinally(Stream s, int n)
    {
        byte[] a = ArrayPool<byte>.Shared.Rent(n);
        try { Io.Read(s, a, n); }
        catch (IOException) { }
        finally { ArrayPool<byte>.Shared.Return(a); }
        return a[0];
    }

    // expect: MNL102
    public byte[] Mnl102_EarlyReturn(int n)
    {
        byte[] a = ArrayPool<byte>.Shared.Rent(n);
        a[0] = 1;
        ArrayPool<byte>.Shared.Return(a);
        if (n > 0) return a;
        return Array.Empty<byte>();
    }

    // expect: MNL102
    public void Mnl102_Switch(int n, int mode)
    {
        byte[] a = ArrayPool<byte>.Shared.Rent(n);
        ArrayPool<byte>.Shared.Return(a);
        switch (mode)
        {
            case 0: ArrayPool<byte>.Shared.Return(a); break;
            default: break;
        }
    }

    // expect: MNL102
    public void Mnl102_LocalFunction(int n)
    {
        Run();
        void Run()
        {
            byte[] a = ArrayPool<byte>.Shared.Rent(n);
            ArrayPool<byte>.Shared.Return(a);
            Io.Fill(a);
        }
    }

    // expect: MNL102
    public Action Mnl102_Lambda(int n) => () =>
    {
        byte[] a = ArrayPool<byte>.Shared.Rent(n);
        ArrayPool<byte>.Shared.Return(a);
        ArrayPool<byte>.Shared.Return(a);
    };

    // expect: MNL102
    public void Mnl102_PassedOn(int n)
    {
        byte[] a = ArrayPool<byte>.Shared.Rent(n);
        ArrayPool<byte>.Shared.Return(a);
        Io.Keep(a);
    }

    // ------------------------------------------------------------------ MNL103

    // expect: MNL103
    public void Mnl103_IfElse(int n, bool c)
    {
        RentedBuffer b = _buffers.RentBuffer(n);
        if (c) b.Dispose();
        else b.Span.Clear();
    }

    // expect: MNL103
    public void Mnl103_Loop(int count)
    {
        for (int i = 0; i < count; i++)
        {
            RentedBuffer b = _buffers.RentBuffer(64);
            if (i == 3) break;
            b.Dispose();
        }
    }

    // expect: MNL103
    public void Mnl103_TryCatchFinally(int n)
    {
        RentedBuffer b = _buffers.RentBuffer(n);
        try { Io.Fill(b.Span); }
        catch (InvalidOperationException) { }
        finally { b.Dispose(); }
        b.Span[0] = 1;
    }

    // expect: MNL103
    public void Mnl103_EarlyReturn(int n)
    {
        RentedBuffer b = _buffers.RentBuffer(n);
        if (n < 16) return;
        b.Span[0] = 1;
        b.Dispose();
    }

    // expect: MNL103
    public void Mnl103_Switch(int n, int mode)
    {
        RentedBuffer b = _buffers.RentBuffer(n);
        b.Dispose();
        switch (mode)
        {
            case 1: b.Dispose(); break;
        }
    }

    // expect: MNL103
    public void Mnl103_LocalFunction(int n)
    {
        Go();
        void Go()
        {
            RentedBuffer b = _buffers.RentBuffer(n);
            b.Span.Clear();
        }
    }

    // expect: MNL103
    public Func<int> Mnl103_Lambda(int n) => () =>
    {
        RentedBuffer b = _buffers.RentBuffer(n);
        b.Dispose();
        return b.Length;
    };

    // expect: MNL103
    public void Mnl103_CopyDisposedTwice(int n)
    {
        RentedBuffer b = _buffers.RentBuffer(n);
        RentedBuffer copy = b;
        copy.Span.Clear();
        b.Dispose();
        copy.Dispose();
    }

    // expect: MNL103
    public void Mnl103_Discarded(int n)
    {
        _buffers.RentBuffer(n);
    }

    // ------------------------------------------------------------------ MNL104

    // expect: MNL104
    public void Mnl104_IfElse(bool c)
    {
        Payload p = _pool.Rent();
        _pool.Return(p);
        if (c) p.Value = 1;
        else p.Reset();
    }

    // expect: MNL104
    public void Mnl104_Loop(int n)
    {
        Payload p = _msPool.Get();
        _msPool.Return(p);
        for (int i = 0; i < n; i++) p.Value += i;
    }

    // expect: MNL104
    public void Mnl104_TryCatchFinally()
    {
        Payload p = _pool.Rent();
        try { p.Value = 2; }
        catch (Exception) { throw; }
        finally { _pool.Return(p); }
        p.Reset();
    }

    // expect: MNL104
    public int Mnl104_EarlyReturn(bool c)
    {
        Payload p = _pool.Rent();
        _pool.Return(p);
        if (c) return p.Value;
        return 0;
    }

    // expect: MNL104
    public void Mnl104_Switch(int mode)
    {
        Payload p = _msPool.Get();
        _msPool.Return(p);
        switch (mode)
        {
            case 2: _msPool.Return(p); break;
        }
    }

    // expect: MNL104
    public void Mnl104_LocalFunction()
    {
        Go();
        void Go()
        {
            Payload p = _pool.Rent();
            _pool.Return(p);
            Io.Consume(p);
        }
    }

    // expect: MNL104
    public Action Mnl104_Lambda() => () =>
    {
        Payload p = _pool.Rent();
        _pool.Return(p);
        p.Value = 5;
    };

    // ------------------------------------------------------------------ MNL105

    // expect: MNL105
    public void Mnl105_IfElse(bool c)
    {
        IPoint p = _allocator.New<IPoint>();
        _allocator.Delete(p);
        if (c) p.X = 1;
        else Io.Consume(c);
    }

    // expect: MNL105
    public int Mnl105_Loop(int n)
    {
        RecordArray<IPoint> points = _allocator.NewArray<IPoint>(n);
        points.Dispose();
        int sum = 0;
        for (int i = 0; i < n; i++) sum += points[i].X;
        return sum;
    }

    // expect: MNL105
    public void Mnl105_TryCatchFinally()
    {
        IPoint p = _allocator.New<IPoint>();
        try { p.X = 1; }
        catch (InvalidOperationException) { }
        finally { _allocator.Delete(p); }
        Io.Use(p);
    }

    // expect: MNL105
    public void Mnl105_EarlyReturn(bool c)
    {
        IPoint p = _allocator.New<IPoint>();
        _allocator.Delete(p);
        if (c) return;
        _allocator.Delete(p);
    }

    // expect: MNL105
    public void Mnl105_Switch(PointHandle h, int mode)
    {
        h.Delete(_allocator);
        switch (mode)
        {
            case 0: Io.Consume(h.X); break;
        }
    }

    // expect: MNL105
    public void Mnl105_LocalFunction()
    {
        Go();
        void Go()
        {
            IPoint p = _allocator.New<IPoint>();
            _allocator.Delete(p);
            p.Y = 3;
        }
    }

    // expect: MNL105
    public Func<int> Mnl105_Lambda(int n) => () =>
    {
        var points = _allocator.NewArray<IPoint>(n);
        points.Dispose();
        return points.Length;
    };

    // ------------------------------------------------------------------ MNL106

    // expect: MNL106
    public void Mnl106_IfElse(bool c)
    {
        var scope = _lock.EnterWriteScope();
        if (c) scope.Dispose();
        else _value++;
    }

    // expect: MNL106
    public void Mnl106_Loop(int n)
    {
        for (int i = 0; i < n; i++)
        {
            _lock.EnterReadScope();
            Io.Consume(_value);
        }
    }

    // expect: MNL106
    public void Mnl106_TryCatchFinally()
    {
        var scope = _lock.EnterWriteScope();
        try { Io.Consume(_value); }
        catch (InvalidOperationException) { }
        scope.Dispose();
    }

    // expect: MNL106
    public void Mnl106_EarlyReturn(bool c)
    {
        var scope = _lock.EnterWriteScope();
        if (c) return;
        _value++;
        scope.Dispose();
    }

    // expect: MNL106
    public void Mnl106_Switch(int mode)
    {
        switch (mode)
        {
            case 0:
                var ev = new EconomicResetEvent();
                ev.Set();
                break;
        }
    }

    // expect: MNL106
    public void Mnl106_LocalFunction()
    {
        Go();
        void Go() { _ = _lock.EnterWriteScope(); _value++; }
    }

    // expect: MNL106
    public Action Mnl106_Lambda(Action work) => () =>
    {
        var dispatcher = new DedicatedThreadDispatcher();
        dispatcher.Post(work);
    };

    // expect: MNL106
    public void Mnl106_ScheduledDropped()
    {
        var value = new ScheduledValue<int>(1, 2, TimeSpan.FromSeconds(1));
        Io.Consume(value.Value);
    }

    // ------------------------------------------------------------------ MNL107

    // expect: MNL107
    public async Task Mnl107_IfElse(bool c)
    {
        var heap = _allocator.GetThreadHeap();
        if (c) await Io.DelayAsync();
        else Io.Consume(c);
        Io.Consume(heap.ThreadId);
    }

    // expect: MNL107
    public async Task Mnl107_Loop(int n)
    {
        var heap = _allocator.GetThreadHeap();
        for (int i = 0; i < n; i++)
        {
            Io.Consume(heap.ThreadId);
            await Io.DelayAsync();
        }
    }

    // expect: MNL107
    public async Task Mnl107_TryCatchFinally()
    {
        var heap = _allocator.GetThreadHeap();
        try { await Io.DelayAsync(); }
        catch (InvalidOperationException) { }
        finally { Io.Consume(heap.ThreadId); }
    }

    // expect: MNL107
    public async Task Mnl107_EarlyReturn(bool c)
    {
        var heap = _allocator.GetThreadHeap();
        if (c) return;
        await Io.DelayAsync();
        Io.Consume(heap.Allocator);
    }

    // expect: MNL107
    public async Task Mnl107_Switch(int mode)
    {
        var heap = _allocator.GetThreadHeap();
        switch (mode)
        {
            case 0:
                await Io.DelayAsync();
                Io.Consume(heap.ThreadId);
                break;
        }
    }

    // expect: MNL107
    public Task Mnl107_LocalFunction()
    {
        var heap = _allocator.GetThreadHeap();
        return Later();
        async Task Later()
        {
            await Io.DelayAsync();
            Io.Consume(heap.ThreadId);
        }
    }

    // expect: MNL107
    public Task Mnl107_Lambda()
    {
        var heap = _allocator.GetThreadHeap();
        return Task.Run(() => Io.Consume(heap.ThreadId));
    }

    // expect: MNL107
    public void Mnl107_StoredInField()
    {
        _heap = _allocator.GetThreadHeap();
    }

    // expect: MNL107
    public object Mnl107_HandedToAKeeper()
    {
        var heap = _allocator.GetThreadHeap();
        return new HeapKeeper(heap);
    }

    // expect: MNL107
    public object Mnl107_HandedToAPrimaryConstructor() => new HeapHolder(_allocator.GetThreadHeap());

    // expect: MNL103
    public void Mnl103_MemoryOwnerEarlyReturn(BufferMemoryPool pool, int n, bool c)
    {
        IMemoryOwner<byte> owner = pool.Rent(n);
        if (c) return;
        owner.Memory.Span.Clear();
        owner.Dispose();
    }

    // ------------------------------------------------------------------ MNL108

    // expect: MNL108
    public void Mnl108_IfElse(bool c)
    {
        PointRef p = default;
        if (c) p = PointRef.New(_allocator);
        else Io.Consume(c);
        p.X = 1;
    }

    // expect: MNL108
    public int Mnl108_Loop(int n)
    {
        PointRef p = default;
        int sum = 0;
        for (int i = 0; i < n; i++) sum += p.X;
        return sum;
    }

    // expect: MNL108
    public void Mnl108_TryCatchFinally()
    {
        PointRef p = default;
        try { Io.Consume(p); }
        catch (InvalidOperationException) { }
        finally { p.Delete(_allocator); }
    }

    // expect: MNL108
    public int Mnl108_EarlyReturn(bool c)
    {
        var p = new PointRef();
        if (c) return 0;
        return p.Y;
    }

    // expect: MNL108
    public void Mnl108_Switch(int mode)
    {
        PointUncheckedRef p = default;
        switch (mode)
        {
            case 0: p = PointUncheckedRef.New(_allocator); break;
            case 1: Io.Consume(mode); break;
        }
        p.X = mode;
    }

    // expect: MNL108
    public void Mnl108_LocalFunction()
    {
        Go();
        void Go() => default(PointRef).Delete(_allocator);
    }

    // expect: MNL108
    public Action Mnl108_Lambda() => () =>
    {
        RecordRef h = default;
        _allocator.DeleteRef(h);
    };

    // ------------------------------------------------------------------ MNL109

    private IPoint? _lastPoint;
    private readonly List<IPoint> _points = new();

    // expect: MNL109
    public void Mnl109_IfElse(RecordArray<IPoint> points, bool c)
    {
        IPoint p = points.MoveTo(0);
        if (c) _lastPoint = p;
        else Io.Consume(p.X);
    }

    // expect: MNL109
    public void Mnl109_Loop(RecordArray<IPoint> points)
    {
        foreach (IPoint p in points.Scan())
            if (p.X > 0) _points.Add(p);
    }

    // expect: MNL109
    public int Mnl109_TryCatchFinally(RecordArray<IPoint> points)
    {
        IPoint? last = null;
        try
        {
            for (int i = 0; i < points.Length; i++)
            {
                IPoint p = points.MoveTo(i);
                if (p.Y > 0) last = p;
            }
        }
        catch (ObjectDisposedException) { }
        finally { Io.Consume(points.Length); }
        return last?.X ?? 0;
    }

    // expect: MNL109
    public IPoint? Mnl109_EarlyReturn(RecordArray<IPoint> points, int x)
    {
        foreach (IPoint p in points.Scan())
        {
            if (p.X == x) return p;
        }
        return null;
    }

    // expect: MNL109
    public void Mnl109_Switch(RecordArray<IPoint> points, int mode)
    {
        switch (mode)
        {
            case 0: _points.Add(points.View); break;
            default: Io.Consume(mode); break;
        }
    }

    // expect: MNL109
    public void Mnl109_LocalFunction(RecordArray<IPoint> points)
    {
        Keep(3);
        void Keep(int i) { IPoint p = points.MoveTo(i); _lastPoint = p; }
    }

    // expect: MNL109
    public int Mnl109_MovedAgain(RecordArray<IPoint> points)
    {
        IPoint first = points.MoveTo(0);
        IPoint last = points.MoveTo(points.Length - 1);
        return last.X - first.X;
    }

    // expect: MNL109
    public Action Mnl109_Lambda(RecordArray<IPoint> points)
    {
        IPoint first = points.MoveTo(0);
        return () => Io.Consume(first.X);
    }
}

/// <summary>Keeps the heap it is given: a worker object built on one thread and run on another.</summary>
public sealed class HeapKeeper
{
    private readonly TypeAllocator.ThreadHeap _heap;
#pragma warning disable MNL107 // the store is the point of this helper; the corpus counts the call site
    public HeapKeeper(TypeAllocator.ThreadHeap heap) => _heap = heap;
#pragma warning restore MNL107
    public int Owner => _heap.ThreadId;
}

public sealed class HeapHolder(TypeAllocator.ThreadHeap heap)
{
    public int Owner => heap.ThreadId;
}
