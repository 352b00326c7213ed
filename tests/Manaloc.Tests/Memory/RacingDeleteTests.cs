using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

public sealed unsafe class RacingDeleteTests
{
    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Two_threads_deleting_the_same_objects_free_each_exactly_once(bool isChecked)
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked });
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
        Assert.Equal(0, allocator.CountLiveObjects());
        // A block freed twice would be handed out twice now.
        var again = Enumerable.Range(0, 2 * count).Select(_ => allocator.New<IFooData>()).ToArray();
        Assert.Equal(again.Length, again.Select(r => (nint)((NativeRecord)(object)r).Address).Distinct().Count());
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Deletes_released_together_on_one_object_free_it_once(bool isChecked)
    {
        // Both threads wait on a spin flag per round and delete the same fresh object at once, so the
        // two stamp releases really overlap (the test above races only where the threads meet).
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked });
        const int rounds = 5_000;
        var records = Enumerable.Range(0, rounds).Select(_ => allocator.New<IFooData>()).ToArray();
        int go = -1, freed = 0, refused = 0, arrived = 0;
        var threads = Enumerable.Range(0, 2).Select(_ => new Thread(() =>
        {
            for (int k = 0; k < rounds; k++)
            {
                var spin = new SpinWait();
                while (Volatile.Read(ref go) < k) spin.SpinOnce(); // test pacing: wait for round k
                try
                {
                    allocator.Delete(records[k]);
                    Interlocked.Increment(ref freed); // test bookkeeping
                }
                catch (InvalidOperationException)
                {
                    Interlocked.Increment(ref refused); // test bookkeeping
                }
                Interlocked.Increment(ref arrived); // tells the pacer this thread finished round k
            }
        }) { IsBackground = true }).ToArray();
        foreach (var t in threads) t.Start();
        var progress = System.Diagnostics.Stopwatch.StartNew();
        for (int k = 0; k < rounds; k++)
        {
            Volatile.Write(ref go, k); // releases both threads on round k
            while (Volatile.Read(ref arrived) < 2 * (k + 1))
            {
                Assert.True(progress.Elapsed < TimeSpan.FromSeconds(10), "no progress for 10 s");
                Thread.Yield();
            }
            progress.Restart(); // watchdog measures time without progress, not total time
        }
        foreach (var t in threads) Assert.True(t.Join(TimeSpan.FromSeconds(60)), "a deleting thread hung");

        Assert.Equal(rounds, freed);
        Assert.Equal(rounds, refused);
        Assert.Equal(0, allocator.CountLiveObjects());
        var again = Enumerable.Range(0, 2 * rounds).Select(_ => allocator.New<IFooData>()).ToArray();
        Assert.Equal(again.Length, again.Select(r => (nint)((NativeRecord)(object)r).Address).Distinct().Count());
    }
}
