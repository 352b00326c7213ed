using System.Runtime.InteropServices;
using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

/// <summary>A held heap is thread-bound: kept across an await, it refuses its first use in a continuation on another thread.</summary>
public sealed class ThreadHeapAwaitTests
{
    [Fact]
    public async Task A_thread_heap_kept_across_an_await_refuses_its_first_use_in_a_continuation_on_another_thread()
    {
        using var slab = new NativeSlabAllocator("across an await");
        Task<(int Owner, int Continuation, Exception? OnAllocate, Exception? OnFree, long Value)> trial = null!;
        // Started on a thread of its own, which ends at the first await: the continuation cannot come back to it.
        var starter = new Thread(() => trial = Trial(slab));
        starter.Start();
        starter.Join();
        var outcome = await trial;
        Assert.NotEqual(outcome.Owner, outcome.Continuation);
        Assert.Contains("NativeSlabAllocator 'across an await'", Assert.IsType<InvalidOperationException>(outcome.OnAllocate).Message, StringComparison.Ordinal);
        Assert.Contains("await", Assert.IsType<InvalidOperationException>(outcome.OnFree).Message, StringComparison.Ordinal);
        Assert.Equal(1234, outcome.Value);
        var stats = slab.GetStatistics();
        Assert.Equal(1, stats.Allocations);
        Assert.Equal(1, stats.Frees);

        static async Task<(int, int, Exception?, Exception?, long)> Trial(NativeSlabAllocator slab)
        {
            int owner = Environment.CurrentManagedThreadId;
            var heap = slab.GetThreadHeap();
            nint block = Allocate(heap);
            Marshal.WriteInt64(block, 1234);
            await Task.Delay(1).ConfigureAwait(false); // resumes on a pool thread
            Exception? onAllocate = null, onFree = null;
            try { Allocate(heap); } catch (InvalidOperationException e) { onAllocate = e; }
            try { Free(heap, block); } catch (InvalidOperationException e) { onFree = e; }
            var result = (owner, Environment.CurrentManagedThreadId, onAllocate, onFree, Marshal.ReadInt64(block));
            FreeRaw(slab, block); // through the allocator, any thread may free
            return result;
        }

        static unsafe nint Allocate(NativeSlabAllocator.ThreadHeap heap) => (nint)heap.Allocate(8);
        static unsafe void Free(NativeSlabAllocator.ThreadHeap heap, nint block) => heap.Free((void*)block);
        static unsafe void FreeRaw(NativeSlabAllocator slab, nint block) => slab.Free((void*)block);
    }
}
