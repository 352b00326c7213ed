using Manaloc.Concurrency.Tests.Systematic;

namespace Manaloc.Concurrency.Tests.Mutants;

/// <summary>
/// The pools' shared tier reduced to one stack, with one deliberate bug: a pop reads the count,
/// takes the top and then stores count-1 with a plain write, where the real shared tier pops under
/// its lock (and the per-thread stacks are never touched by another thread). Two threads that pop
/// together get the same object. Stands in for SemiLocalPool, CategorizedPool and BufferManager,
/// whose shared tiers have this shape.
/// </summary>
internal sealed class RacyStackPool<T>(Func<T> create) : IPoolUnderTest<T> where T : class
{
    private readonly T?[] _items = new T?[16];
    private int _count;
    private readonly object _pushLock = new();

    public T Rent()
    {
        int count = Volatile.Read(ref _count);
        if (count == 0) return create();
        T item = _items[count - 1]!;
        Volatile.Write(ref _count, count - 1); // BUG: a pop must be atomic (under the lock, or a CAS on the count)
        return item;
    }

    public void Return(T item)
    {
        lock (_pushLock)
        {
            int count = Volatile.Read(ref _count);
            if (count == _items.Length) return;
            _items[count] = item;
            Volatile.Write(ref _count, count + 1);
        }
    }

    public void Trim()
    {
    }
}
