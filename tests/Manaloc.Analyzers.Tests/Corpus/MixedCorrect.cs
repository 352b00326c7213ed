// More correct code: async methods, using declarations, pattern-heavy and helper-heavy styles. Nothing to report.
using System.Buffers.Text;
using System.IO;
using System.Linq;
using System.Text;

namespace Corpus;

public sealed class MixedCorrect
{
    private readonly SlimReaderWriterLock _lock = new();
    private readonly BufferManager _buffers = new();
    private readonly IObjectPool<Payload> _pool = new LockedPool<Payload>(() => new Payload());
    private readonly TypeAllocator _allocator = new();
    private readonly List<byte[]> _retained = new();
    private readonly Dictionary<string, int> _map = new();
    private int _counter;

    // expect: none
    public async Task<int> AsyncRentedBufferRead(Stream s, int n)
    {
        using RentedBuffer buffer = _buffers.RentBuffer(n);
        return await s.ReadAsync(buffer.Memory);
    }

    // expect: none
    public async Task AsyncLoopWithPool(Stream s, int rounds)
    {
        for (int i = 0; i < rounds; i++)
        {
            byte[] chunk = ArrayPool<byte>.Shared.Rent(1024);
            try
            {
                int read = await s.ReadAsync(chunk.AsMemory());
                if (read == 0) break;
            }
            finally { ArrayPool<byte>.Shared.Return(chunk); }
        }
    }

    // expect: none
    public async Task AsyncScopeAroundNoAwait()
    {
        await Io.DelayAsync();
        int snapshot;
        using (_lock.EnterReadScope()) snapshot = _counter;
        await Io.DelayAsync();
        Io.Consume(snapshot);
    }

    // expect: none
    public async ValueTask<bool> AsyncPooledObject()
    {
        Payload p = _pool.Rent();
        try
        {
            await Io.DelayAsync();
            return p.Value == 0;
        }
        finally { _pool.Return(p); }
    }

    // expect: none
    public string Base64Encode(ReadOnlySpan<byte> data)
    {
        int length = Base64.GetMaxEncodedToUtf8Length(data.Length);
        byte[] rented = ArrayPool<byte>.Shared.Rent(length);
        try
        {
            Base64.EncodeToUtf8(data, rented, out _, out int written);
            return Encoding.ASCII.GetString(rented, 0, written);
        }
        finally { ArrayPool<byte>.Shared.Return(rented); }
    }

    // expect: none
    public int CountWithUsingBlockAndEarlyExit(int n)
    {
        using (var scope = _lock.EnterReadScope())
        {
            if (n < 0) return -1;
            return _counter + n;
        }
    }

    // expect: none
    public void WriteScopeInCatch()
    {
        try { Io.Consume(_counter); }
        catch (InvalidOperationException)
        {
            using var scope = _lock.EnterWriteScope();
            _counter = 0;
        }
    }

    // expect: none
    public void ScopeInSwitch(int mode)
    {
        switch (mode)
        {
            case 0:
                using (_lock.EnterWriteScope()) _counter = 0;
                break;
            case 1:
                using (_lock.EnterReadScope()) Io.Consume(_counter);
                break;
        }
    }

    // expect: none
    public void RetainSome(int n)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        if (n > 1000) _retained.Add(buffer);
        else ArrayPool<byte>.Shared.Return(buffer);
    }

    // expect: none
    public void ReturnViaHelper(int n)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        ReturnLater(buffer);
    }

    private static void ReturnLater(byte[] buffer) => ArrayPool<byte>.Shared.Return(buffer);

    // expect: none
    public void RecordsInLoop(int n)
    {
        for (int i = 0; i < n; i++)
        {
            IPoint p = _allocator.New<IPoint>();
            p.X = i;
            _allocator.Delete(p);
        }
    }

    // expect: none
    public void RecordsCollectedThenDeleted(int n)
    {
        var points = new List<IPoint>();
        for (int i = 0; i < n; i++) points.Add(_allocator.New<IPoint>());
        foreach (IPoint p in points) _allocator.Delete(p);
    }

    // expect: none
    public void RecordDeletedOnlyWhenFlag(bool delete)
    {
        IPoint p = _allocator.New<IPoint>();
        if (delete) _allocator.Delete(p);
        if (!delete) p.X = 1;
    }

    // expect: none
    public void PooledObjectConditionalReturn(bool keep, List<Payload> kept)
    {
        Payload p = _pool.Rent();
        p.Value = 1;
        if (!keep) { _pool.Return(p); return; }
        kept.Add(p);
    }

    // expect: none
    public int LinqOverRented(int n)
    {
        int[] values = ArrayPool<int>.Shared.Rent(n);
        try
        {
            for (int i = 0; i < n; i++) values[i] = i;
            return values.Take(n).Sum();
        }
        finally { ArrayPool<int>.Shared.Return(values); }
    }

    // expect: none
    public void StringBuilderAndPool(StringBuilder sb, int n)
    {
        char[] chars = ArrayPool<char>.Shared.Rent(n);
        try
        {
            chars.AsSpan(0, n).Fill('-');
            sb.Append(chars, 0, n);
        }
        finally { ArrayPool<char>.Shared.Return(chars); }
    }

    // expect: none
    public void TryGetValueStyle(string key, int n)
    {
        if (!_map.TryGetValue(key, out int size)) size = n;
        byte[] buffer = ArrayPool<byte>.Shared.Rent(size);
        try { Io.Fill(buffer); }
        finally { ArrayPool<byte>.Shared.Return(buffer); }
    }

    // expect: none
    public void GotoCleanup(int n)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        if (n == 0) goto done;
        buffer[0] = 1;
    done:
        ArrayPool<byte>.Shared.Return(buffer);
    }

    // expect: none
    public void WhileTrueWithBreak(int n)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        int i = 0;
        while (true)
        {
            buffer[i % buffer.Length] = 1;
            if (++i > n) break;
        }
        ArrayPool<byte>.Shared.Return(buffer);
    }

    // expect: none
    public void ThrowBeforeRent(int n)
    {
        if (n < 0) throw new ArgumentOutOfRangeException(nameof(n));
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        try { Io.Fill(buffer); }
        finally { ArrayPool<byte>.Shared.Return(buffer); }
    }

    // expect: none
    public void ThrowHelperInsideTry(int n)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        try
        {
            if (buffer.Length < n) throw new InvalidOperationException("short");
            Io.Fill(buffer);
        }
        finally { ArrayPool<byte>.Shared.Return(buffer); }
    }

    // expect: none
    public void ConditionalExpressionPool(bool big)
    {
        ArrayPool<byte> pool = big ? ArrayPool<byte>.Create() : ArrayPool<byte>.Shared;
        byte[] buffer = pool.Rent(big ? 1 << 20 : 1024);
        try { Io.Fill(buffer); }
        finally { pool.Return(buffer); }
    }

    // expect: none
    public void NullableReturnWithQuestionDot(int n)
    {
        byte[]? buffer = n > 0 ? ArrayPool<byte>.Shared.Rent(n) : null;
        Io.Consume(buffer?.Length ?? 0);
        if (buffer is { } b) ArrayPool<byte>.Shared.Return(b);
    }

    // expect: none
    public int ExpressionBodied(int n) => Io.Sum(stackalloc byte[n]);

    // expect: none
    public void EventInUsingStatement()
    {
        using (var ev = new EconomicResetEvent())
        {
            ev.Set();
        }
    }

    // expect: none
    public void EventHandedToTask(List<Task> tasks)
    {
        var ev = new EconomicResetEvent();
        tasks.Add(WaitAndDispose(ev));
    }

    private static async Task WaitAndDispose(EconomicResetEvent ev)
    {
        try { await Task.Yield(); ev.Wait(); }
        finally { ev.Dispose(); }
    }

    // expect: none
    public void DispatcherInCollection(List<DedicatedThreadDispatcher> all)
    {
        all.Add(new DedicatedThreadDispatcher());
    }

    // expect: none
    public IDisposable ScheduledAsInterface()
    {
        IDisposable d = new ScheduledValue<int>(0, 1, TimeSpan.FromSeconds(5));
        return d;
    }

    // expect: none
    public void RentedBufferConditionalDispose(int n)
    {
        RentedBuffer buffer = default;
        bool rented = false;
        try
        {
            buffer = _buffers.RentBuffer(n);
            rented = true;
            Io.Fill(buffer.Span);
        }
        finally
        {
            if (rented) buffer.Dispose();
        }
    }

    // expect: none
    public void PoolReturnInLambdaCallback(List<Action> callbacks)
    {
        Payload p = _pool.Rent();
        callbacks.Add(() => _pool.Return(p));
    }

    // expect: none
    public async Task HeapUsedBeforeAwaitOnly()
    {
        var heap = _allocator.GetThreadHeap();
        int id = heap.ThreadId;
        await Io.DelayAsync();
        Io.Consume(id);
    }

    // expect: none
    public void RecordArrayScan(int n)
    {
        using var points = _allocator.NewArray<IPoint>(n);
        foreach (IPoint p in points) p.X = 1;
    }

    // expect: none
    public int RecordArrayDisposedInFinally(int n)
    {
        var points = _allocator.NewArray<IPoint>(n);
        try { return points.Length; }
        finally { points.Dispose(); }
    }

    // expect: none
    public void RecordArrayReturnedToCaller(int n, List<RecordArray<IPoint>> keep)
    {
        var points = _allocator.NewArray<IPoint>(n);
        keep.Add(points);
    }

    // expect: none
    public void SharedPoolArrayOfStrings(int n)
    {
        string[] names = ArrayPool<string>.Shared.Rent(n);
        try
        {
            for (int i = 0; i < n; i++) names[i] = i.ToString();
            Io.Consume(string.Join(",", names, 0, n));
        }
        finally { ArrayPool<string>.Shared.Return(names, clearArray: true); }
    }

    // expect: none
    public void IsPatternNotNullReturn(int n)
    {
        byte[]? rented = null;
        try
        {
            if (n > 10) rented = ArrayPool<byte>.Shared.Rent(n);
            Io.Consume(n);
        }
        finally
        {
            if (rented is not null) ArrayPool<byte>.Shared.Return(rented);
        }
    }

    // expect: none
    public void CheckedContextArithmetic(int n)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        int doubled = checked(n * 2);
        buffer[0] = (byte)doubled;
        ArrayPool<byte>.Shared.Return(buffer);
    }

    // expect: none
    public int TernaryReturnBeforeReturn(int n)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        int value = buffer.Length > 10 ? buffer[0] : -1;
        ArrayPool<byte>.Shared.Return(buffer);
        return value;
    }
}
