using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

public sealed unsafe class ThreadCacheReclaimTests
{
    [Fact]
    public void The_blocks_cached_by_exited_threads_go_back_and_their_chunks_are_freed()
    {
        using var slab = new NativeSlabAllocator("exited threads");
        const int Threads = 200;
        for (int t = 0; t < Threads; t++)
        {
            var thread = new Thread(() =>
            {
                // Enough to take batches from the shared lists; every block freed but left in this thread's cache.
                var blocks = new nint[256];
                for (int i = 0; i < blocks.Length; i++) blocks[i] = (nint)slab.Allocate((nuint)(16 + i % 8 * 64));
                foreach (var p in blocks) slab.Free((void*)p);
            });
            thread.Start();
            thread.Join();
        }
        long before = slab.GetStatistics().ReservedBytes;
        for (int i = 0; i < 5 && slab.GetStatistics().Chunks > 8; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        // Eight classes used, at most one empty chunk kept per class.
        Assert.True(slab.GetStatistics().Chunks <= 8, $"{slab.GetStatistics().Chunks} chunks ({slab.GetStatistics().ReservedBytes / 1024} KiB, {before / 1024} KiB before the collections) still held after {Threads} threads exited");
        var stats = slab.GetStatistics();
        Assert.Equal(stats.Allocations, stats.Frees);
    }

    [Fact]
    public void A_thread_heap_allocates_and_frees_on_its_thread_and_is_the_same_object_there()
    {
        using var slab = new NativeSlabAllocator();
        var heap = slab.GetThreadHeap();
        Assert.Same(heap, slab.GetThreadHeap());
        Assert.Same(slab, heap.Allocator);
        Assert.Equal(Environment.CurrentManagedThreadId, heap.ThreadId);
        var blocks = new List<nint>();
        for (int size = 0; size <= 20_000; size += 97)
        {
            byte* p = (byte*)heap.Allocate((nuint)size);
            new Span<byte>(p, size).Fill(0x5A);
            blocks.Add((nint)p);
        }
        Assert.Equal(blocks.Count, blocks.Distinct().Count());
        // Blocks of a heap may go back through the allocator (and the other way round).
        for (int i = 0; i < blocks.Count; i++)
        {
            if (i % 2 == 0) heap.Free((void*)blocks[i]);
            else slab.Free((void*)blocks[i]);
        }
        heap.Free(null);
        var stats = slab.GetStatistics();
        Assert.Equal(stats.Allocations, stats.Frees);
    }

    [Fact]
    public void A_thread_heap_refuses_another_threads_first_Allocate_and_first_Free()
    {
        using var slab = new NativeSlabAllocator("held elsewhere");
        var heap = slab.GetThreadHeap();
        var mine = (int*)heap.Allocate(64);
        *mine = 42;
        var before = slab.GetStatistics();
        nint taken = 0;
        InvalidOperationException? onAllocate = null, onFree = null;
        int otherId = 0;
        var other = new Thread(() =>
        {
            otherId = Environment.CurrentManagedThreadId;
            // The owner waits in Join, so an unchecked call would not race it here: only the check can refuse these.
            try { taken = (nint)heap.Allocate(64); } catch (InvalidOperationException e) { onAllocate = e; }
            try { heap.Free(mine); } catch (InvalidOperationException e) { onFree = e; }
        });
        other.Start();
        other.Join();
        Assert.Equal(0, taken);
        Assert.NotNull(onAllocate);
        Assert.NotNull(onFree);
        foreach (var error in new[] { onAllocate, onFree })
        {
            Assert.Contains($"managed thread {heap.ThreadId}", error.Message, StringComparison.Ordinal);
            Assert.Contains($"managed thread {otherId}", error.Message, StringComparison.Ordinal);
            Assert.Contains("'held elsewhere'", error.Message, StringComparison.Ordinal);
            Assert.Contains("await", error.Message, StringComparison.Ordinal);
        }
        Assert.Equal(before, slab.GetStatistics()); // nothing allocated, nothing freed
        Assert.Equal(42, *mine); // the refused Free left the block alone
        // On its own thread the heap still works, and the block it had is freed once.
        heap.Free(mine);
        var again = (int*)heap.Allocate(64);
        Assert.Equal((nint)mine, (nint)again); // the bin's top: the block went back exactly once
        heap.Free(again);
        var stats = slab.GetStatistics();
        Assert.Equal(stats.Allocations, stats.Frees);
    }

    [Fact]
    public void A_thread_heap_used_after_Dispose_throws_ObjectDisposedException()
    {
        var slab = new NativeSlabAllocator();
        var heap = slab.GetThreadHeap();
        slab.Dispose();
        Assert.Throws<ObjectDisposedException>(() => heap.Allocate(16));
        Assert.Throws<ObjectDisposedException>(() => slab.GetThreadHeap());
    }
}
