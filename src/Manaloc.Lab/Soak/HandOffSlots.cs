namespace Manaloc.Lab.Soak;

/// <summary>
/// A fixed array of slots where one thread leaves an item and another (usually) takes it later:
/// the soak's hand-off between load threads. Its size never changes, so the soak's own
/// bookkeeping cannot show up as managed-heap drift. (A <c>ConcurrentQueue</c> does: when a
/// dequeuer is preempted between claiming a slot and releasing it, the enqueuers that lap it see
/// the segment as full and start one twice the size, so its segments keep doubling under
/// oversubscription even though the count stays bounded.)
/// </summary>
/// <remarks>
/// Invariant: an item is in at most one slot and held by at most one thread. Leaving publishes
/// the item with a compare-exchange from null, taking removes it with an exchange to null; both
/// are full fences, so the taker sees every write the leaver made to the item before leaving it,
/// and exactly one taker gets it.
/// </remarks>
internal sealed class HandOffSlots<T>(int capacity) where T : class
{
    private readonly T?[] _slots = new T?[capacity];

    /// <summary>Leaves <paramref name="item"/> in slot <c>index % capacity</c>; false (item still the caller's) if that slot is taken.</summary>
    public bool TryLeave(int index, T item) => Interlocked.CompareExchange(ref _slots[index % _slots.Length], item, null) is null;

    /// <summary>Takes the item in slot <c>index % capacity</c>, if any.</summary>
    public bool TryTake(int index, out T item)
    {
        item = Interlocked.Exchange(ref _slots[index % _slots.Length], null)!;
        return item is not null;
    }

    /// <summary>The items in the slots now, without taking them: exact only while nobody leaves or takes (at a <see cref="QuietPoint"/>).</summary>
    public int Count(out long sum, Func<T, long> measure)
    {
        int count = 0;
        sum = 0;
        foreach (var item in _slots)
        {
            if (item is null) continue;
            count++;
            sum += measure(item);
        }
        return count;
    }

    /// <summary>Takes every item left (call once the threads that leave items have stopped).</summary>
    public IEnumerable<T> TakeAll()
    {
        for (int i = 0; i < _slots.Length; i++)
        {
            if (TryTake(i, out var item)) yield return item;
        }
    }
}
