// Correct use of Manaloc's buffer owners, pools, typed memory, lock scopes, disposables and held heaps.
using Microsoft.Extensions.ObjectPool;

namespace Corpus;

/// <summary>The shape of a generated struct handle: it deletes itself from an allocator.</summary>
public readonly struct PointHandle
{
    private readonly int _slot;
    public PointHandle(int slot) => _slot = slot;
    public int X => _slot;
    public void Delete(TypeAllocator allocator) => Io.Consume(allocator);
}

public sealed class ManalocCorrect
{
    private readonly BufferManager _buffers = new();
    private readonly IObjectPool<Payload> _pool = new LockedPool<Payload>(() => new Payload());
    private readonly ObjectPool<Payload> _msPool = new DefaultObjectPool<Payload>(new DefaultPooledObjectPolicy<Payload>());
    private readonly TypeAllocator _allocator = new();
    private readonly SlimReaderWriterLock _lock = new();
    private EconomicResetEvent? _event;
    private DedicatedThreadDispatcher? _dispatcher;
    private int _value;
    [ThreadStatic] private static TypeAllocator.ThreadHeap? t_heap;

    // expect: none
    public void RentedBufferUsing(int n)
    {
        using RentedBuffer buffer = _buffers.RentBuffer(n);
        buffer.Span.Fill(1);
    }

    // expect: none
    public void RentedBufferUsingStatement(int n)
    {
        using (RentedBuffer buffer = _buffers.RentBuffer(n))
        {
            Io.Fill(buffer.Span);
        }
    }

    // expect: none
    public int RentedBufferTryFinally(int n)
    {
        RentedBuffer buffer = _buffers.RentBuffer(n);
        try { return Io.Sum(buffer.Span); }
        finally { buffer.Dispose(); }
    }

    // expect: none
    public RentedBuffer RentedBufferReturned(int n)
    {
        RentedBuffer buffer = _buffers.RentBuffer(n);
        buffer.Span.Clear();
        return buffer;
    }

    // expect: none
    public void RentedBufferStored(List<RentedBuffer> keep, int n)
    {
        RentedBuffer buffer = _buffers.RentBuffer(n);
        keep.Add(buffer);
    }

    // expect: none
    public async Task RentedBufferAsync(System.IO.Stream s, int n)
    {
        using RentedBuffer buffer = _buffers.RentBuffer(n);
        await s.WriteAsync(buffer.Memory);
    }

    // expect: none
    public void RentedBufferCopyDisposedOnce(int n)
    {
        RentedBuffer b = _buffers.RentBuffer(n);
        RentedBuffer copy = b;
        try { copy.Span.Clear(); }
        finally { copy.Dispose(); }
    }

    // expect: none
    public void BufferManagerAsArrayPool(int n)
    {
        byte[] array = _buffers.Rent(n);
        try { Io.Fill(array); }
        finally { _buffers.Return(array); }
    }

    // expect: none
    public void PoolRentReturn()
    {
        Payload p = _pool.Rent();
        p.Value = 3;
        _pool.Return(p);
    }

    // expect: none
    public void PoolRentTryFinally()
    {
        Payload p = _pool.Rent();
        try { Io.Consume(p); }
        finally { _pool.Return(p); }
    }

    // expect: none
    public void PoolReturnThenRentAgain()
    {
        Payload p = _pool.Rent();
        _pool.Return(p);
        p = _pool.Rent();
        p.Value = 1;
        _pool.Return(p);
    }

    // expect: none
    public int PoolReadBeforeReturn()
    {
        Payload p = _pool.Rent();
        int v = p.Value;
        _pool.Return(p);
        return v;
    }

    // expect: none
    public void MsPoolGetReturn()
    {
        Payload p = _msPool.Get();
        try { p.Value++; }
        finally { _msPool.Return(p); }
    }

    // expect: none
    public void MsPoolBranches(bool keep, List<Payload> kept)
    {
        Payload p = _msPool.Get();
        if (keep) kept.Add(p);
        else _msPool.Return(p);
    }

    // expect: none
    public void PoolInLoop(int n)
    {
        for (int i = 0; i < n; i++)
        {
            Payload p = _pool.Rent();
            p.Value = i;
            _pool.Return(p);
        }
    }

    // expect: none
    public void RecordNewDelete()
    {
        IPoint p = _allocator.New<IPoint>();
        p.X = 1;
        Io.Use(p);
        _allocator.Delete(p);
    }

    // expect: none
    public void RecordDeleteThenNew()
    {
        IPoint p = _allocator.New<IPoint>();
        _allocator.Delete(p);
        p = _allocator.New<IPoint>();
        p.Y = 2;
        _allocator.Delete(p);
    }

    // expect: none
    public void RecordDeleteInFinally()
    {
        IPoint p = _allocator.New<IPoint>();
        try { p.X = 5; }
        finally { _allocator.Delete(p); }
    }

    // expect: none
    public void RecordDeleteOnOnePath(bool drop)
    {
        IPoint p = _allocator.New<IPoint>();
        if (drop) { _allocator.Delete(p); return; }
        p.X = 3;
    }

    // expect: none
    public void StructHandleDelete(PointHandle h)
    {
        int x = h.X;
        h.Delete(_allocator);
        Io.Consume(x);
    }

    // expect: none
    public int RecordArrayUsing(int n)
    {
        using RecordArray<IPoint> points = _allocator.NewArray<IPoint>(n);
        int sum = 0;
        for (int i = 0; i < points.Length; i++) sum += points[i].X;
        return sum;
    }

    // expect: none
    public int RecordArrayDisposeLast(int n)
    {
        RecordArray<IPoint> points = _allocator.NewArray<IPoint>(n);
        int count = points.Length;
        points.Dispose();
        return count;
    }

    // expect: none
    public void WriteScopeUsing()
    {
        using (_lock.EnterWriteScope())
        {
            _value++;
        }
    }

    // expect: none
    public int ReadScopeUsingDeclaration()
    {
        using var scope = _lock.EnterReadScope();
        return _value;
    }

    // expect: none
    public void WriteScopeUsingVar()
    {
        using (var scope = _lock.EnterWriteScope())
        {
            _value = 0;
        }
    }

    // expect: none
    public void ScopeTryFinally()
    {
        var scope = _lock.EnterWriteScope();
        try { _value++; }
        finally { scope.Dispose(); }
    }

    // expect: none
    public void ScopeNoThrowBetween()
    {
        var scope = _lock.EnterReadScope();
        int v = _value;
        scope.Dispose();
        _value = v;
    }

    // expect: none
    public void ScopeInLoop(int n)
    {
        for (int i = 0; i < n; i++)
        {
            using var scope = _lock.EnterWriteScope();
            _value += i;
        }
    }

    // expect: none
    public async Task ScopeBeforeAwait()
    {
        using (_lock.EnterWriteScope()) { _value++; }
        await Io.DelayAsync();
        using (_lock.EnterReadScope()) { Io.Consume(_value); }
    }

    // expect: none
    public void EventStoredInField()
    {
        _event = new EconomicResetEvent();
    }

    // expect: none
    public void EventLocalStoredInField()
    {
        var ev = new EconomicResetEvent();
        _event = ev;
    }

    // expect: none
    public void EventUsing()
    {
        using var ev = new EconomicResetEvent();
        ev.Set();
        ev.Wait();
    }

    // expect: none
    public EconomicResetEvent EventReturned()
    {
        var ev = new EconomicResetEvent(initialState: true);
        return ev;
    }

    // expect: none
    public void DispatcherStored()
    {
        var dispatcher = new DedicatedThreadDispatcher();
        _dispatcher = dispatcher;
    }

    // expect: none
    public void DispatcherUsing(Action work)
    {
        using var dispatcher = new DedicatedThreadDispatcher();
        dispatcher.Post(work);
    }

    // expect: none
    public void DispatcherTryFinally(Action work)
    {
        var dispatcher = new DedicatedThreadDispatcher();
        try { dispatcher.Post(work); }
        finally { dispatcher.Dispose(); }
    }

    // expect: none
    public ScheduledValue<int> ScheduledReturned()
    {
        return new ScheduledValue<int>(1, 2, TimeSpan.FromSeconds(1));
    }

    // expect: none
    public void ScheduledUsing()
    {
        using var value = new ScheduledValue<int>(1, 2, TimeSpan.FromSeconds(1));
        Io.Consume(value.Value);
    }

    // expect: none
    public void ScheduledPassedToOwner(List<IDisposable> owners)
    {
        var value = new ScheduledValue<bool>(false, true, TimeSpan.FromMinutes(1));
        owners.Add(value);
    }

    // expect: none
    public void HeapUsedSynchronously()
    {
        TypeAllocator.ThreadHeap heap = _allocator.GetThreadHeap();
        Io.Consume(heap.ThreadId);
        Io.Consume(heap.Allocator);
    }

    // expect: none
    public async Task HeapTakenAfterAwait()
    {
        await Io.DelayAsync();
        TypeAllocator.ThreadHeap heap = _allocator.GetThreadHeap();
        Io.Consume(heap.ThreadId);
    }

    // expect: none
    public async Task HeapRetakenAfterAwait()
    {
        var heap = _allocator.GetThreadHeap();
        Io.Consume(heap.ThreadId);
        await Io.DelayAsync();
        heap = _allocator.GetThreadHeap();
        Io.Consume(heap.ThreadId);
    }

    // expect: none
    public void HeapInThreadStatic()
    {
        t_heap = _allocator.GetThreadHeap();
    }

    // expect: none
    public Task HeapTakenInsideTaskRun()
    {
        return Task.Run(() =>
        {
            var heap = _allocator.GetThreadHeap();
            Io.Consume(heap.ThreadId);
        });
    }

    // expect: none
    public void HeapInSynchronousLocalFunction()
    {
        var heap = _allocator.GetThreadHeap();
        Report();
        void Report() => Io.Consume(heap.ThreadId);
    }

    // expect: none
    public void HeapInSynchronousLambda(List<int> items)
    {
        var heap = _allocator.GetThreadHeap();
        items.ForEach(i => Io.Consume(heap.ThreadId + i));
    }
}
