using System.Collections.Concurrent;
using Manaloc.Memory;

namespace Manaloc.Generators.Tests;

/// <summary>Struct handles made through one thread's heap and deleted through another's: no record handed out twice, none lost.</summary>
public class StructHandleThreadTests
{
    [Fact]
    public async Task Records_made_on_one_thread_and_deleted_on_another_keep_their_values_and_all_go_back()
    {
        using var allocator = new TypeAllocator();
        const int PerThread = 200_000;
        var handedOver = new[] { new ConcurrentQueue<FooDataRef>(), new ConcurrentQueue<FooDataRef>() };
        var errors = new ConcurrentQueue<string>();
        using var start = new Barrier(2);
        var workers = Enumerable.Range(0, 2).Select(t => Task.Factory.StartNew(() =>
        {
            var heap = allocator.GetThreadHeap(); // this thread's own
            var mine = handedOver[t];
            var theirs = handedOver[1 - t];
            start.SignalAndWait();
            int made = 0, deleted = 0;
            while (made < PerThread || deleted < PerThread)
            {
                if (made < PerThread)
                {
                    var r = FooDataRef.New(heap);
                    long id = (long)t << 32 | (uint)made;
                    r.Id = id;
                    r.Count = made++;
                    mine.Enqueue(r); // a synchronizing hand-off to the other thread
                }
                if (deleted < PerThread && theirs.TryDequeue(out var other))
                {
                    // Made by the other thread with Id = (other << 32) | Count: a record handed out twice would show another's values.
                    if (other.Id != ((long)(1 - t) << 32 | (uint)other.Count)) errors.Enqueue($"record {other} holds {other.Id:x}/{other.Count}");
                    other.Delete(heap);
                    deleted++;
                }
            }
        }, TaskCreationOptions.LongRunning)).ToArray();
        await Task.WhenAll(workers);
        Assert.Empty(errors);
        var stats = allocator.GetSlabStatistics();
        Assert.Equal(stats.Allocations, stats.Frees);
        Assert.Equal(2L * PerThread, stats.Allocations);
    }
}
