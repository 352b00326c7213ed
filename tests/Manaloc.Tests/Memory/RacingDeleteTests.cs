using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

public sealed unsafe class RacingDeleteTests
{
    [Fact]
    public void Two_threads_deleting_the_same_objects_free_each_exactly_once()
    {
        using var allocator = new TypeAllocator();
        const int count = 5000;
        var records = Enumerable.Range(0, count).Select(_ => allocator.New<IFooData>()).ToArray();
        int freed = 0, refused = 0;
        using var start = new Barrier(2);
        var threads = Enumerable.Range(0, 2).Select(t => new Thread(() =>
        {
            start.SignalAndWait();
            // Opposite directions, so the threads meet in the middle and race on the same objects.
            for (int k = 0; k < count; k++)
            {
                var r = records[t == 0 ? k : count - 1 - k];
                try
                {
                    allocator.Delete(r);
                    Interlocked.Increment(ref freed); // test bookkeeping
                }
                catch (InvalidOperationException)
                {
                    Interlocked.Increment(ref refused); // test bookkeeping
                }
            }
        })).ToArray();
        foreach (var t in threads) t.Start();
        foreach (var t in threads) Assert.True(t.Join(TimeSpan.FromSeconds(60)), "a deleting thread hung");

        Assert.Equal(count, freed);
        Assert.Equal(count, refused);
        Assert.Equal(0, allocator.LiveObjectCount);
        // A block freed twice would be handed out twice now.
        var again = Enumerable.Range(0, 2 * count).Select(_ => allocator.New<IFooData>()).ToArray();
        Assert.Equal(again.Length, again.Select(r => (nint)((NativeRecord)(object)r).Address).Distinct().Count());
    }
}
