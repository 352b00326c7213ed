using System.Collections.Concurrent;
using Manaloc.Lab.Soak;

namespace Manaloc.Lab.Tests.Soak;

/// <summary>The soak's hand-off slots: every item left is taken exactly once, by a taker or by the final TakeAll.</summary>
public sealed class HandOffSlotsTests
{
    [Fact]
    public void A_slot_holds_one_item_and_gives_it_once()
    {
        var slots = new HandOffSlots<object>(4);
        var a = new object();
        Assert.True(slots.TryLeave(5, a));           // slot 1
        Assert.False(slots.TryLeave(1, new object())); // taken: the item stays the caller's
        Assert.True(slots.TryTake(9, out var taken)); // slot 1 again
        Assert.Same(a, taken);
        Assert.False(slots.TryTake(1, out _));
        Assert.Empty(slots.TakeAll());
    }

    [Fact]
    public async Task Racing_leavers_and_takers_lose_and_duplicate_nothing()
    {
        const int PerLeaver = 200_000;
        var slots = new HandOffSlots<string>(64);
        var taken = new ConcurrentDictionary<string, int>();
        int leaversDone = 0;
        var leavers = Enumerable.Range(0, 2).Select(t => Task.Run(() =>
        {
            for (int i = 0; i < PerLeaver; i++)
            {
                string item = $"{t}:{i}";
                int index = (i * 7 + t) & 0x3FFF_FFFF;
                while (!slots.TryLeave(index++, item)) { }
            }
            Interlocked.Increment(ref leaversDone);
        })).ToArray();
        var takers = Enumerable.Range(0, 2).Select(t => Task.Run(() =>
        {
            int index = t;
            while (Volatile.Read(ref leaversDone) < 2)
            {
                if (slots.TryTake(index++ & 0x3FFF_FFFF, out var item)) taken.AddOrUpdate(item, 1, (_, n) => n + 1);
            }
        })).ToArray();
        await Task.WhenAll([.. leavers, .. takers]).WaitAsync(TimeSpan.FromMinutes(2));
        foreach (var item in slots.TakeAll()) taken.AddOrUpdate(item, 1, (_, n) => n + 1);

        Assert.Equal(2 * PerLeaver, taken.Count);
        Assert.All(taken, pair => Assert.Equal(1, pair.Value));
    }
}
