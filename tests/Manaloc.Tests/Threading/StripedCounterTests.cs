using Manaloc.Threading;

namespace Manaloc.Tests.Threading;

public sealed class StripedCounterTests
{
    [Fact]
    public void Concurrent_increments_sum_exactly()
    {
        var counter = new StripedCounter();
        const int Threads = 4, PerThread = 200_000;
        var threads = Enumerable.Range(0, Threads).Select(t => new Thread(() =>
        {
            for (int i = 0; i < PerThread; i++)
            {
                counter.Increment();
                if (i % 1000 == 0) Thread.Yield(); // migrate between processors now and then
            }
        })).ToArray();
        foreach (var t in threads) t.Start();
        foreach (var t in threads) Assert.True(t.Join(TimeSpan.FromSeconds(60)), "an incrementing thread stalled");
        Assert.Equal((long)Threads * PerThread, counter.Sum());
    }

    [Fact]
    public void Add_decrement_and_reset()
    {
        var counter = new StripedCounter(3);
        Assert.Equal(4, counter.CellCount);
        counter.Add(10);
        counter.Add(-3);
        counter.Decrement();
        Assert.Equal(6, counter.Sum());
        Assert.Equal("6", counter.ToString());
        Assert.Equal(6, counter.Reset());
        Assert.Equal(0, counter.Sum());
    }

    [Fact]
    public void Reset_racing_with_adds_counts_every_add_once()
    {
        var counter = new StripedCounter();
        long harvested = 0;
        const int Adds = 300_000;
        var adder = new Thread(() => { for (int i = 0; i < Adds; i++) counter.Increment(); });
        adder.Start();
        while (adder.IsAlive) harvested += counter.Reset();
        Assert.True(adder.Join(TimeSpan.FromSeconds(60)));
        harvested += counter.Reset();
        Assert.Equal(Adds, harvested);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(4097)]
    public void Bad_cell_counts_are_refused(int cells)
    {
        var e = Assert.Throws<ArgumentOutOfRangeException>(() => new StripedCounter(cells));
        Assert.Equal("cells", e.ParamName);
    }

    [Fact]
    public void Increment_allocates_nothing()
    {
        var counter = new StripedCounter();
        for (int i = 0; i < 100; i++) counter.Increment();
        int runs = 0;
        long allocated = Allocations.OnThisThread(() =>
        {
            for (int i = 0; i < 100_000; i++) counter.Increment();
            runs++;
            GC.KeepAlive(counter.Sum());
        });
        Assert.Equal(0, allocated);
        Assert.Equal(100 + runs * 100_000L, counter.Sum());
    }
}
