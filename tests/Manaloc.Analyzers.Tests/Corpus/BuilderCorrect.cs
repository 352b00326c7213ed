// ValueListBuilder-style structs, owner classes and ownership passed out: the analyzer must say nothing.
namespace Corpus;

public ref struct ByteBuilder
{
    private byte[]? _rented;
    private Span<byte> _span;
    private int _length;

    // expect: none
    public ByteBuilder(Span<byte> initial)
    {
        _rented = null;
        _span = initial;
        _length = 0;
    }

    // expect: none
    public void Append(byte value)
    {
        if (_length == _span.Length) Grow();
        _span[_length++] = value;
    }

    // expect: none
    private void Grow()
    {
        byte[] next = ArrayPool<byte>.Shared.Rent(Math.Max(16, _span.Length * 2));
        _span.Slice(0, _length).CopyTo(next);
        byte[]? old = _rented;
        _span = _rented = next;
        if (old is not null) ArrayPool<byte>.Shared.Return(old);
    }

    // expect: none
    public void Dispose()
    {
        byte[]? rented = _rented;
        this = default;
        if (rented is not null) ArrayPool<byte>.Shared.Return(rented);
    }
}

public struct PooledList<T>
{
    private T[] _items;
    private int _count;

    // expect: none
    public PooledList(int capacity)
    {
        _items = ArrayPool<T>.Shared.Rent(capacity);
        _count = 0;
    }

    // expect: none
    public void Add(T item)
    {
        if (_count == _items.Length)
        {
            T[] bigger = ArrayPool<T>.Shared.Rent(_items.Length * 2);
            Array.Copy(_items, bigger, _count);
            ArrayPool<T>.Shared.Return(_items);
            _items = bigger;
        }
        _items[_count++] = item;
    }

    // expect: none
    public T[] DetachArray()
    {
        T[] items = _items;
        _items = Array.Empty<T>();
        return items;
    }

    // expect: none
    public void Dispose()
    {
        T[] items = _items;
        _items = Array.Empty<T>();
        if (items.Length > 0) ArrayPool<T>.Shared.Return(items);
    }
}

public sealed class ArrayBackedWriter : IDisposable
{
    private byte[] _buffer;
    private int _written;

    // expect: none
    public ArrayBackedWriter(int initial) => _buffer = ArrayPool<byte>.Shared.Rent(initial);

    // expect: none
    public Span<byte> GetSpan(int hint)
    {
        if (_buffer.Length - _written < hint)
        {
            byte[] next = ArrayPool<byte>.Shared.Rent(_written + hint);
            _buffer.AsSpan(0, _written).CopyTo(next);
            ArrayPool<byte>.Shared.Return(_buffer);
            _buffer = next;
        }
        return _buffer.AsSpan(_written);
    }

    // expect: none
    public void Advance(int count) => _written += count;

    // expect: none
    public void Dispose()
    {
        byte[] buffer = _buffer;
        _buffer = Array.Empty<byte>();
        if (buffer.Length > 0) ArrayPool<byte>.Shared.Return(buffer);
    }
}

public sealed class BuilderUsers
{
    // expect: none
    public int UseRefStructBuilder()
    {
        var builder = new ByteBuilder(stackalloc byte[32]);
        try
        {
            for (int i = 0; i < 100; i++) builder.Append((byte)i);
            return 100;
        }
        finally { builder.Dispose(); }
    }

    // expect: none
    public void UsePooledList()
    {
        var list = new PooledList<int>(4);
        try { for (int i = 0; i < 10; i++) list.Add(i); }
        finally { list.Dispose(); }
    }

    // expect: none
    public void UseWriter()
    {
        using var writer = new ArrayBackedWriter(64);
        writer.GetSpan(10).Fill(1);
        writer.Advance(10);
    }

    // expect: none
    public (byte[] Array, int Length) RentTuple(int n)
    {
        byte[] array = ArrayPool<byte>.Shared.Rent(n);
        return (array, n);
    }

    // expect: none
    public void OutThroughRefStruct(int n, out ArraySegment<byte> segment)
    {
        byte[] array = ArrayPool<byte>.Shared.Rent(n);
        segment = new ArraySegment<byte>(array, 0, n);
    }

    // expect: none
    public ArrayOwner OwnerFactory(int n)
    {
        var owner = new ArrayOwner(ArrayPool<byte>.Shared.Rent(n));
        return owner;
    }

    // expect: none
    public void RentIntoDictionary(Dictionary<int, byte[]> map, int key, int n)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        map[key] = buffer;
    }

    // expect: none
    public void ReturnFromDictionary(Dictionary<int, byte[]> map, int key)
    {
        if (map.Remove(key, out byte[]? buffer)) ArrayPool<byte>.Shared.Return(buffer);
    }

    // expect: none
    public Task<byte[]> RentForTask(int n)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        return Task.FromResult(buffer);
    }

    // expect: none
    public IEnumerable<byte[]> YieldRented(int count)
    {
        for (int i = 0; i < count; i++)
        {
            byte[] buffer = ArrayPool<byte>.Shared.Rent(16);
            yield return buffer;
        }
    }

    // expect: none
    public void HandToAsyncOwner(int n, List<Task> tasks)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        tasks.Add(ProcessAndReturnAsync(buffer));
    }

    // expect: none
    private static async Task ProcessAndReturnAsync(byte[] buffer)
    {
        try { await Io.DelayAsync(); Io.Fill(buffer); }
        finally { ArrayPool<byte>.Shared.Return(buffer); }
    }

    // expect: none
    public void ReturnParameterOnce(byte[] buffer)
    {
        Io.Fill(buffer);
        ArrayPool<byte>.Shared.Return(buffer);
    }

    // expect: none
    public void RentedPassedToConstructorKept(int n, Queue<ArraySegment<byte>> queue)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        var segment = new ArraySegment<byte>(buffer, 0, n);
        queue.Enqueue(segment);
    }

    // expect: none
    public object BoxedOwner(int n)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        object o = buffer;
        return o;
    }

    // expect: none
    public void InterlockedSwapIntoField(ref byte[]? slot, int n)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(n);
        byte[]? previous = Interlocked.Exchange(ref slot, buffer);
        if (previous is not null) ArrayPool<byte>.Shared.Return(previous);
    }

    // expect: none
    public void NullCoalescingRent(byte[]? existing, int n)
    {
        byte[] buffer = existing ?? ArrayPool<byte>.Shared.Rent(n);
        Io.Keep(buffer);
    }

    // expect: none
    public void PatternGuardedReturn(object state)
    {
        if (state is byte[] array) ArrayPool<byte>.Shared.Return(array);
    }
}
