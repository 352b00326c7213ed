using System.Runtime.CompilerServices;
using Manaloc.Memory;

namespace Manaloc.Memory.Records.Tests;

/// <summary>
/// Allocation and free counts after records made and deleted through held heaps on threads that then exit (their caches
/// retired by the finalizer), deleted on another thread and flushed: every count exact once the threads are gone.
/// </summary>
public class HeapStatisticsLifecycleTests
{
    [Fact]
    public void Counts_stay_exact_across_exited_threads_caches_and_flushes()
    {
        using var allocator = new TypeAllocator();
        var before = allocator.GetSlabStatistics();
        const int PerThread = 3000; // several refills; each thread deletes a third itself, through its heap
        var survivors = new List<FooDataUncheckedRef>();
        for (int t = 0; t < 3; t++)
        {
            var thread = new Thread(() =>
            {
                var heap = allocator.GetThreadHeap();
                var made = new FooDataUncheckedRef[PerThread];
                for (int i = 0; i < PerThread; i++) made[i] = FooDataUncheckedRef.New(heap);
                for (int i = 0; i < PerThread / 3; i++) made[i].Delete(heap);
                lock (survivors) survivors.AddRange(made.Skip(PerThread / 3));
            });
            thread.Start();
            thread.Join();
        }
        CollectExitedCaches();
        var mid = allocator.GetSlabStatistics();
        Assert.Equal(3 * PerThread, mid.Allocations - before.Allocations);
        Assert.Equal(PerThread, mid.Frees - before.Frees);
        Assert.Equal(survivors.Count, allocator.CountLiveObjects());

        var heap = allocator.GetThreadHeap();
        for (int i = 0; i < survivors.Count; i += 2) survivors[i].Delete(heap); // this thread's heap frees others' records
        allocator.FlushThreadCache();
        for (int i = 1; i < survivors.Count; i += 2) survivors[i].Delete(allocator);
        var after = allocator.GetSlabStatistics();
        Assert.Equal(3 * PerThread, after.Allocations - before.Allocations);
        Assert.Equal(3 * PerThread, after.Frees - before.Frees);
        Assert.Equal(before.LiveBlocks, after.LiveBlocks);
        Assert.Equal(0, allocator.CountLiveObjects());
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void CollectExitedCaches()
    {
        for (int i = 0; i < 3; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
    }
}
