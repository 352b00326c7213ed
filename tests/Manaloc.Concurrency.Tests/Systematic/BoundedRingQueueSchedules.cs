using Manaloc.Threading;
using Microsoft.Coyote.Specifications;
using Xunit.Abstractions;

namespace Manaloc.Concurrency.Tests.Systematic;

/// <summary>The dispatcher's queue on its own: producers, a consumer and a close racing on a two-slot ring.</summary>
public sealed class BoundedRingQueueSchedules(ITestOutputHelper output)
{
    private const int Capacity = 2;
    private const int Producers = 2;
    private const int ItemsPerProducer = 3;

    private sealed record Item(int Producer, int Index);

    // Outcomes over all schedules, so the test can show the races were reached, not one lucky order.
    private static long s_accepted, s_full, s_closed, s_consumed, s_drained;

    // Invariants: every accepted item is taken exactly once (by the consumer or by the drain after the close), a refused
    // one never; each producer's items come out in the order it put them in; the queue never holds more than its
    // capacity; the close's final tail is exactly the number of items accepted, and nothing is accepted after it.
    internal static void ProducersConsumerAndClose()
    {
        var queue = new BoundedRingQueue<Item>(Capacity);
        var results = new EnqueueResult[Producers, ItemsPerProducer];
        var producers = new Task[Producers];
        for (int p = 0; p < Producers; p++)
        {
            int producer = p;
            producers[p] = Task.Run(() =>
            {
                for (int i = 0; i < ItemsPerProducer; i++)
                {
                    bool closedBefore = queue.IsClosed;
                    results[producer, i] = queue.TryEnqueue(new Item(producer, i), out long depth);
                    Specification.Assert(depth <= Capacity, $"a producer saw a depth of {depth} in a queue of {Capacity}");
                    if (closedBefore) Specification.Assert(results[producer, i] == EnqueueResult.Closed, $"item {producer}.{i} was {results[producer, i]} after the close");
                }
            });
        }
        var taken = new List<Item>();
        var consumer = Task.Run(() =>
        {
            for (int i = 0; i < ItemsPerProducer; i++) // fewer attempts than items: the drain takes the rest
            {
                Specification.Assert(queue.Count <= Capacity, $"the queue held {queue.Count} items, over its capacity of {Capacity}");
                if (queue.TryDequeue(out var item)) taken.Add(item);
            }
        });
        producers[0].Wait(); // the first producer's items are in (or refused as full); the second races with the close
        long finalTail = queue.Close();
        foreach (var producer in producers) producer.Wait();
        consumer.Wait();
        int consumed = taken.Count;
        while (queue.TryDequeue(out var item)) taken.Add(item);
        Specification.Assert(queue.Head == finalTail, $"the drain stopped at {queue.Head}, the close's final tail is {finalTail}");

        int accepted = 0;
        for (int p = 0; p < Producers; p++)
        {
            int last = -1;
            for (int i = 0; i < ItemsPerProducer; i++)
            {
                int count = taken.Count(t => t.Producer == p && t.Index == i);
                var result = results[p, i];
                if (result == EnqueueResult.Accepted)
                {
                    accepted++;
                    Specification.Assert(count == 1, $"item {p}.{i} was accepted and taken {count} time(s)");
                }
                else
                {
                    Specification.Assert(count == 0, $"item {p}.{i} was refused ({result}) and taken {count} time(s)");
                }
                Interlocked.Increment(ref result == EnqueueResult.Accepted ? ref s_accepted : ref result == EnqueueResult.Full ? ref s_full : ref s_closed);
            }
            foreach (var item in taken.Where(t => t.Producer == p))
            {
                Specification.Assert(item.Index > last, $"producer {p}'s item {item.Index} came out after its item {last}");
                last = item.Index;
            }
        }
        Specification.Assert(accepted == finalTail, $"{accepted} items were accepted, the close's final tail is {finalTail}");
        Interlocked.Add(ref s_consumed, consumed);
        Interlocked.Add(ref s_drained, taken.Count - consumed);
    }

    [CoyoteFact]
    public void Producers_a_consumer_and_a_close_lose_nothing_and_keep_each_producers_order()
    {
        s_accepted = s_full = s_closed = s_consumed = s_drained = 0;
        Assert.Equal(0, Explorer.Explore(ProducersConsumerAndClose, output).Bugs);
        output.WriteLine($"outcomes over all schedules: {s_accepted} accepted, {s_full} full, {s_closed} closed; {s_consumed} consumed, {s_drained} drained");
        Console.WriteLine($"coyote-outcomes ring-queue: {s_accepted} accepted, {s_full} full, {s_closed} closed; {s_consumed} consumed, {s_drained} drained");
        // Every outcome occurred: full and closed refusals, items taken by the consumer and by the drain.
        Assert.True(s_accepted > 0 && s_full > 0 && s_closed > 0 && s_consumed > 0 && s_drained > 0,
            $"{s_accepted} accepted, {s_full} full, {s_closed} closed; {s_consumed} consumed, {s_drained} drained");
    }
}
