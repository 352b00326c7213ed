using Manaloc.Memory;
using Manaloc.Memory.CompilerServices;

namespace Manaloc.Memory.Records.Tests;

/// <summary>
/// The generated handles and the held heap's constant-folded New and Delete (<c>ThreadHeap.New&lt;TRecord&gt;</c>):
/// the paths they leave to the general code (large records, stack capture, default, unregistered type arguments) and the
/// statistics a push no longer counts directly.
/// </summary>
public class TypedHandlePathTests
{
    [Fact]
    public void Records_larger_than_the_largest_class_go_through_the_heap_too()
    {
        using var allocator = new TypeAllocator();
        var heap = allocator.GetThreadHeap();
        var a = LargeRef.New(heap);
        var b = LargeUncheckedRef.New(heap);
        a.Far = long.MaxValue;
        a.Near = 7;
        b.Far = 42;
        Assert.Equal((long.MaxValue, 7, 42L), (a.Far, a.Near, b.Far));
        Assert.Equal(2, allocator.CountLiveObjects());
        a.Delete(heap);
        b.Delete(heap);
        Assert.Equal(0, allocator.CountLiveObjects());
        Assert.Contains("already deleted", Assert.Throws<InvalidOperationException>(() => a.Delete(heap)).Message);
        Assert.Throws<InvalidOperationException>(() => b.Delete(heap));
        Assert.Throws<InvalidOperationException>(() => a.Far);
    }

    [Fact]
    public void With_stack_capture_a_heaps_records_carry_their_stacks_until_deleted()
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { CaptureAllocationStacks = true, LeakReported = null });
        var heap = allocator.GetThreadHeap();
        var kept = FooDataRef.New(heap);
        var dropped = FooDataUncheckedRef.New(heap);
        dropped.Delete(heap);
        var entry = Assert.Single(allocator.GetLiveObjects().Entries);
        Assert.Equal(1, entry.Count);
        Assert.Contains(nameof(With_stack_capture_a_heaps_records_carry_their_stacks_until_deleted), Assert.Single(entry.AllocationStacks));
        kept.Delete(heap);
        Assert.Empty(allocator.GetLiveObjects().Entries);
    }

    [Fact]
    public void Allocation_and_free_counts_stay_exact_through_refills_and_flushes()
    {
        using var allocator = new TypeAllocator();
        var heap = allocator.GetThreadHeap();
        var before = allocator.GetSlabStatistics();
        const int Count = 20_000; // several refills and, on the way back, several flushes of the bin
        var records = new FooDataUncheckedRef[Count];
        for (int i = 0; i < Count; i++) records[i] = FooDataUncheckedRef.New(heap);
        for (int i = 0; i < Count / 2; i++) records[i].Delete(heap);
        var mid = allocator.GetSlabStatistics();
        Assert.Equal(Count, mid.Allocations - before.Allocations);
        Assert.Equal(Count / 2, mid.Frees - before.Frees);
        for (int i = Count / 2; i < Count; i++) records[i].Delete(allocator); // the thread-static path counts the same way
        var after = allocator.GetSlabStatistics();
        Assert.Equal(Count, after.Frees - before.Frees);
        Assert.Equal(before.LiveBlocks, after.LiveBlocks);
    }

    [Fact]
    public void A_default_typed_handle_throws_and_converts_to_a_default_untyped_one()
    {
        using var allocator = new TypeAllocator();
        var heap = allocator.GetThreadHeap();
        Assert.Contains("default", Assert.Throws<InvalidOperationException>(() => default(FooDataRef).Count).Message);
        Assert.False(default(FooDataRef).IsAllocated);
        Assert.Equal(default, default(FooDataRef).Handle);
        Assert.Throws<ArgumentException>(() => default(FooDataUncheckedRef).Delete(heap));
        Assert.Throws<ArgumentException>(() => default(FooDataRef).Delete(allocator));
    }

    [Fact]
    public void A_typed_handle_refuses_an_untyped_handle_of_another_record_size()
    {
        using var allocator = new TypeAllocator();
        var large = LargeRef.New(allocator);
        var ex = Assert.Throws<ArgumentException>(() => RecordRef<FooDataRef.__Record>.From(large.Handle));
        Assert.Contains("another size", ex.Message);
        Assert.Equal(default, RecordRef<FooDataRef.__Record>.From(default));
        var foo = FooDataRef.New(allocator);
        foo.Count = 5;
        var again = RecordRef<FooDataRef.__Record>.From(foo.Handle);
        Assert.Equal(5, again.FieldAt<int>(FooDataRef.RecordType.Layout.Fields.Single(f => f.Name == "Count").Offset));
        large.Delete(allocator);
        foo.Delete(allocator);
    }

    [Fact]
    public void A_type_argument_that_no_module_registered_is_refused_by_name()
    {
        using var allocator = new TypeAllocator();
        var heap = allocator.GetThreadHeap();
        var ex = Assert.Throws<InvalidOperationException>(() => RecordRef<HandWrittenFactory>.New(heap));
        Assert.Contains(nameof(HandWrittenFactory), ex.Message);
        Assert.Throws<InvalidOperationException>(() => UncheckedRecordRef<HandWrittenFactory>.New(heap));
        Assert.Throws<InvalidOperationException>(() => default(RecordRef<HandWrittenFactory>).FieldAt<int>(0));
        var foo = FooDataRef.New(allocator);
        Assert.Contains(nameof(HandWrittenFactory), Assert.Throws<InvalidOperationException>(() => RecordRef<HandWrittenFactory>.From(foo.Handle)).Message);
        Assert.Throws<InvalidOperationException>(() => UncheckedRecordRef<HandWrittenFactory>.From(foo.AsUnchecked().Handle));
        foo.Delete(allocator);
        Assert.Equal(0, allocator.CountLiveObjects());
    }

    [Fact]
    public void The_first_Delete_through_another_threads_heap_is_refused_before_the_stamp()
    {
        using var allocator = new TypeAllocator();
        var heap = allocator.GetThreadHeap();
        var records = new FooDataUncheckedRef[3];
        for (int i = 0; i < records.Length; i++) records[i] = FooDataUncheckedRef.New(heap);
        int deleted = 0;
        Exception? error = null;
        var thread = new Thread(() =>
        {
            try
            {
                for (; deleted < records.Length; deleted++) records[deleted].Delete(heap);
            }
            catch (InvalidOperationException e)
            {
                error = e;
            }
        });
        thread.Start();
        thread.Join();
        Assert.Contains("belongs to managed thread", Assert.IsType<InvalidOperationException>(error).Message);
        Assert.Equal(0, deleted);
        Assert.True(records[0].IsAllocated); // refused before its stamp moved
        foreach (var record in records) record.Delete(heap); // the owner deletes them all, each once
        Assert.Equal(0, allocator.CountLiveObjects());
    }

    private struct HandWrittenFactory : ICompiledRecordFactory
    {
        public static CompiledRecord CreateChecked() => throw new NotSupportedException();
        public static CompiledRecord CreateUnchecked() => throw new NotSupportedException();
        public static CompiledRecordView CreateCheckedView() => throw new NotSupportedException();
        public static CompiledRecordView CreateUncheckedView() => throw new NotSupportedException();
        public static CompiledRecordView CreateCheckedItem() => throw new NotSupportedException();
    }
}
