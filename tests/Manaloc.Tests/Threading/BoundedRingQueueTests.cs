using Manaloc.Threading;

namespace Manaloc.Tests.Threading;

public sealed class BoundedRingQueueTests
{
    [Theory]
    [InlineData(1)]
    [InlineData(3)] // a ring of 4 slots: the capacity, not the ring, bounds the queue
    [InlineData(64)]
    public void Holds_exactly_its_capacity_in_order_lap_after_lap(int capacity)
    {
        var queue = new BoundedRingQueue<string>(capacity);
        for (int lap = 0; lap < 3; lap++)
        {
            for (int i = 0; i < capacity; i++) Assert.Equal(EnqueueResult.Accepted, queue.TryEnqueue($"{lap}.{i}", out _));
            Assert.Equal(EnqueueResult.Full, queue.TryEnqueue("over", out long depth));
            Assert.Equal(capacity, depth); // a full queue reports its capacity as the depth seen
            Assert.Equal(capacity, queue.Count);
            for (int i = 0; i < capacity; i++)
            {
                Assert.True(queue.TryDequeue(out var item));
                Assert.Equal($"{lap}.{i}", item);
            }
            Assert.False(queue.TryDequeue(out _));
            Assert.Equal(0, queue.Count);
        }
        Assert.Equal(3L * capacity, queue.Tail);
        Assert.Equal(queue.Tail, queue.Head);
    }

    [Fact]
    public void Reports_the_depth_on_every_sampled_position_only()
    {
        var queue = new BoundedRingQueue<object>(1000);
        var depths = new List<long>();
        for (int i = 0; i < 3 * BoundedRingQueue<object>.DepthSampleInterval; i++)
        {
            Assert.Equal(EnqueueResult.Accepted, queue.TryEnqueue(new object(), out long depth));
            depths.Add(depth);
        }
        // Positions 0, 64 and 128 read the real head: the depth with the new item; every other position reports nothing.
        Assert.Equal([1L, 65L, 129L], depths.Where(d => d != 0));
        Assert.Equal(1L, depths[0]);
        Assert.Equal(65L, depths[BoundedRingQueue<object>.DepthSampleInterval]);
    }

    [Fact]
    public void Close_fixes_the_accepted_positions_and_refuses_every_later_item()
    {
        var queue = new BoundedRingQueue<string>(4);
        Assert.Equal(EnqueueResult.Accepted, queue.TryEnqueue("a", out _));
        Assert.Equal(EnqueueResult.Accepted, queue.TryEnqueue("b", out _));
        Assert.True(queue.TryDequeue(out var first));
        Assert.Equal("a", first);
        Assert.False(queue.IsClosed);

        Assert.Equal(2, queue.Close());
        Assert.True(queue.IsClosed);
        Assert.Equal(2, queue.Close()); // once: a second close changes nothing
        Assert.Equal(EnqueueResult.Closed, queue.TryEnqueue("c", out _));
        Assert.Equal(2, queue.Tail);
        Assert.Equal(2 | BoundedRingQueue<string>.ClosedBit, queue.TailAndClosedBit);
        // What was accepted before the close can still be taken (the dispatcher's drain).
        Assert.True(queue.TryDequeue(out var second));
        Assert.Equal("b", second);
        Assert.False(queue.TryDequeue(out _));
    }

    [Fact]
    public async Task Concurrent_producers_and_consumers_take_every_accepted_item_once()
    {
        const int Producers = 3, PerProducer = 20_000;
        var queue = new BoundedRingQueue<int[]>(16);
        var taken = new int[Producers * PerProducer];
        long accepted = 0;
        var producers = Enumerable.Range(0, Producers).Select(p => Task.Run(() =>
        {
            for (int i = 0; i < PerProducer; i++)
            {
                var item = new[] { p * PerProducer + i };
                while (queue.TryEnqueue(item, out _) == EnqueueResult.Full) Thread.Yield();
                Interlocked.Increment(ref accepted);
            }
        })).ToArray();
        var consumers = Enumerable.Range(0, 2).Select(_ => Task.Run(() =>
        {
            while (!producers.All(t => t.IsCompleted) || queue.Count > 0)
            {
                if (queue.TryDequeue(out var item)) Interlocked.Increment(ref taken[item[0]]);
                else Thread.Yield();
            }
        })).ToArray();
        await Task.WhenAll([.. producers, .. consumers]).WaitAsync(TimeSpan.FromMinutes(2));
        Assert.Equal(Producers * PerProducer, Interlocked.Read(ref accepted));
        Assert.All(taken, count => Assert.Equal(1, count));
        Assert.Equal(0, queue.Count);
    }
}
