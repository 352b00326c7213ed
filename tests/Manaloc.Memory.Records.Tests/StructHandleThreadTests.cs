using System.Collections.Concurrent;
using Manaloc.Memory;

namespace Manaloc.Memory.Records.Tests;

/// <summary>
/// Struct handles made through one thread's heap and deleted through another's: no record handed out twice, none lost. And
/// the newcomer's trial: one thread's held heap used on another thread is refused on the first New and the first Delete,
/// before anything is touched, whatever the handle kind and path.
/// </summary>
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

    /// <summary>One way of making, writing, reading and deleting a record through a held heap.</summary>
    private sealed record HeapPath(
        Func<TypeAllocator.ThreadHeap, object> New,
        Action<TypeAllocator.ThreadHeap, object> Delete,
        Action<object, long> Write,
        Func<object, long> Read,
        Func<object, bool> IsAllocated);

    public static TheoryData<string> Paths() =>
    [
        "checked handle", "unchecked allocator", "unchecked handle of a checked allocator", "untyped checked",
        "untyped unchecked of a checked allocator", "large record", "stack capture",
    ];

    private static HeapPath PathOf(string path) => path switch
    {
        "checked handle" or "stack capture" => new(h => FooDataRef.New(h), (h, r) => ((FooDataRef)r).Delete(h), (r, v) => ((FooDataRef)r).Id = v, r => ((FooDataRef)r).Id, r => ((FooDataRef)r).IsAllocated),
        "unchecked allocator" or "unchecked handle of a checked allocator" => new(h => FooDataUncheckedRef.New(h), (h, r) => ((FooDataUncheckedRef)r).Delete(h), (r, v) => ((FooDataUncheckedRef)r).Id = v, r => ((FooDataUncheckedRef)r).Id, r => ((FooDataUncheckedRef)r).IsAllocated),
        "untyped checked" => new(h => h.New(FooDataRef.RecordType), (h, r) => h.Delete((RecordRef)r), (r, v) => ((RecordRef)r).FieldAt<long>(0) = v, r => ((RecordRef)r).FieldAt<long>(0), r => ((RecordRef)r).IsAllocated),
        "untyped unchecked of a checked allocator" => new(h => h.NewUnchecked(FooDataRef.RecordType), (h, r) => h.Delete((UncheckedRecordRef)r), (r, v) => ((UncheckedRecordRef)r).FieldAt<long>(0) = v, r => ((UncheckedRecordRef)r).FieldAt<long>(0), r => ((UncheckedRecordRef)r).IsAllocated),
        "large record" => new(h => LargeRef.New(h), (h, r) => ((LargeRef)r).Delete(h), (r, v) => ((LargeRef)r).Far = v, r => ((LargeRef)r).Far, r => ((LargeRef)r).IsAllocated),
        _ => throw new ArgumentOutOfRangeException(nameof(path), path, null),
    };

    [Theory]
    [MemberData(nameof(Paths))]
    public void A_held_heap_used_on_another_thread_refuses_the_first_New_and_the_first_Delete(string path)
    {
        var ops = PathOf(path);
        using var allocator = new TypeAllocator(new TypeAllocatorOptions
        {
            Name = "newcomer",
            Checked = path != "unchecked allocator",
            CaptureAllocationStacks = path == "stack capture",
            LeakReported = null,
        });
        var heap = allocator.GetThreadHeap();
        var mine = ops.New(heap);
        ops.Write(mine, 0x5EED);
        var before = allocator.GetSlabStatistics();

        // Thread B: the owner waits in Join meanwhile, so an unchecked call would not even race it here; only the check
        // can refuse these, and it must do so on the first call of each kind.
        object? made = null;
        InvalidOperationException? onNew = null, onDelete = null;
        int otherId = 0;
        var other = new Thread(() =>
        {
            otherId = Environment.CurrentManagedThreadId;
            try { made = ops.New(heap); } catch (InvalidOperationException e) { onNew = e; }
            try { ops.Delete(heap, mine); } catch (InvalidOperationException e) { onDelete = e; }
        });
        other.Start();
        other.Join();

        Assert.Null(made);
        foreach (var error in new[] { onNew, onDelete })
        {
            Assert.NotNull(error);
            Assert.Contains($"belongs to managed thread {heap.ThreadId}", error.Message, StringComparison.Ordinal);
            Assert.Contains($"managed thread {otherId} used it", error.Message, StringComparison.Ordinal);
            Assert.Contains("TypeAllocator 'newcomer'", error.Message, StringComparison.Ordinal);
            Assert.Contains("GetThreadHeap", error.Message, StringComparison.Ordinal);
            Assert.Contains("await", error.Message, StringComparison.Ordinal);
        }
        Assert.True(ops.IsAllocated(mine)); // the refused Delete left the stamp alone
        Assert.Equal(0x5EED, ops.Read(mine)); // and the value written on the owner's thread
        Assert.Equal(before, allocator.GetSlabStatistics()); // nothing allocated or freed, the counters exact

        // Nothing was handed out twice: the owner's next record is another block, and each is deleted exactly once.
        var next = ops.New(heap);
        Assert.True(ops.IsAllocated(next));
        Assert.Equal(0x5EED, ops.Read(mine));
        ops.Delete(heap, mine);
        ops.Delete(heap, next);
        Assert.Equal(0, allocator.CountLiveObjects());
        var after = allocator.GetSlabStatistics();
        Assert.Equal(after.Allocations, after.Frees);
        Assert.Equal(before.Allocations + 1, after.Allocations);
    }

    [Fact]
    public async Task A_held_heap_kept_across_an_await_throws_on_its_first_use_in_a_continuation_on_another_thread()
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Name = "across an await" });
        Task<(int Owner, int Continuation, Exception? OnNew, Exception? OnDelete, long Value, bool Allocated)> trial = null!;
        // Started on a thread of its own, which ends at the first await: the continuation cannot come back to it.
        var starter = new Thread(() => trial = Trial(allocator));
        starter.Start();
        starter.Join();
        var outcome = await trial;

        Assert.NotEqual(outcome.Owner, outcome.Continuation);
        Assert.Contains("TypeAllocator 'across an await'", Assert.IsType<InvalidOperationException>(outcome.OnNew).Message, StringComparison.Ordinal);
        Assert.Contains("await", Assert.IsType<InvalidOperationException>(outcome.OnDelete).Message, StringComparison.Ordinal);
        Assert.True(outcome.Allocated);
        Assert.Equal(41, outcome.Value);
        var stats = allocator.GetSlabStatistics();
        Assert.Equal(1, stats.Allocations); // the refused New took nothing
        Assert.Equal(1, stats.Frees); // the record went back once, through the allocator

        static async Task<(int, int, Exception?, Exception?, long, bool)> Trial(TypeAllocator allocator)
        {
            int owner = Environment.CurrentManagedThreadId;
            var heap = allocator.GetThreadHeap();
            var record = FooDataRef.New(heap);
            record.Id = 41;
            await Task.Delay(1).ConfigureAwait(false); // resumes on a pool thread
            Exception? onNew = null, onDelete = null;
            try { FooDataRef.New(heap); } catch (InvalidOperationException e) { onNew = e; }
            try { record.Delete(heap); } catch (InvalidOperationException e) { onDelete = e; }
            var result = (owner, Environment.CurrentManagedThreadId, onNew, onDelete, record.Id, record.IsAllocated);
            record.Delete(allocator); // through the allocator, any thread may delete
            return result;
        }
    }
}
