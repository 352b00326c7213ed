using Manaloc.Memory;

namespace Manaloc.Memory.Records.Tests;

/// <summary>The generated struct handles: values in native memory, checks of the checked form, 0 bytes per New+Delete.</summary>
public class StructHandleTests
{
    [Fact]
    public void Properties_read_and_write_the_record_through_every_copy()
    {
        using var allocator = new TypeAllocator();
        var a = FooDataRef.New(allocator);
        Assert.True(a.IsAllocated);
        Assert.Equal((0, 0L, 0.0, (byte)0), (a.Count, a.Id, a.Value, a.Flag)); // zeroed
        a.Count = 7;
        a.Id = long.MinValue;
        a.Value = 2.5;
        a.Flag = 255;
        var copy = a;
        IFooData viaInterface = a;
        Assert.Equal((7, long.MinValue, 2.5, (byte)255), (copy.Count, copy.Id, copy.Value, copy.Flag));
        Assert.Equal(7, viaInterface.Count);
        Assert.Equal(a, copy);
        a.Delete(allocator);
        Assert.False(copy.IsAllocated);
    }

    [Fact]
    public void Use_after_Delete_throws_for_every_copy_even_after_the_slot_is_reused()
    {
        using var allocator = new TypeAllocator();
        var a = FooDataRef.New(allocator);
        var copy = a;
        a.Delete(allocator);
        var b = FooDataRef.New(allocator); // most likely the same block
        b.Count = 42;
        var read = Assert.Throws<InvalidOperationException>(() => copy.Count);
        Assert.Contains("The IFooData record was used through a struct handle after it was deleted", read.Message);
        Assert.Throws<InvalidOperationException>(() => copy.Count = 1);
        Assert.Contains("The IFooData record handle is default", Assert.Throws<InvalidOperationException>(() => default(FooDataRef).Count).Message);
        Assert.Equal(42, b.Count); // the stale write did not land
        b.Delete(allocator);
    }

    [Fact]
    public void Double_Delete_throws_and_does_not_free_the_next_record()
    {
        using var allocator = new TypeAllocator();
        var a = FooDataRef.New(allocator);
        a.Delete(allocator);
        var b = FooDataRef.New(allocator);
        var second = Assert.Throws<InvalidOperationException>(() => a.Delete(allocator));
        Assert.Contains("already deleted", second.Message);
        Assert.True(b.IsAllocated);
        b.Delete(allocator);
    }

    [Fact]
    public void Use_and_Delete_after_the_allocators_Dispose_throw_object_disposed()
    {
        var allocator = new TypeAllocator();
        var a = FooDataRef.New(allocator);
        a.Count = 1;
        allocator.Dispose();
        Assert.False(a.IsAllocated);
        Assert.Throws<ObjectDisposedException>(() => a.Count);
        Assert.Throws<ObjectDisposedException>(() => a.Delete(allocator));
        Assert.Throws<ObjectDisposedException>(() => FooDataRef.New(allocator));
        Assert.Equal(1, allocator.LastLeakReport!.Entries.Single(e => e.TypeName == "IFooData").Count);
    }

    [Fact]
    public void Default_and_foreign_handles_are_refused()
    {
        using var mine = new TypeAllocator();
        using var other = new TypeAllocator();
        FooDataRef none = default;
        Assert.False(none.IsAllocated);
        Assert.Throws<InvalidOperationException>(() => none.Count);
        Assert.Throws<ArgumentException>(() => none.Delete(mine));
        var theirs = FooDataRef.New(other);
        Assert.Contains("another TypeAllocator", Assert.Throws<ArgumentException>(() => theirs.Delete(mine)).Message);
        theirs.Delete(other);
    }

    [Fact]
    public async Task Racing_deletes_of_one_record_free_it_exactly_once()
    {
        using var allocator = new TypeAllocator();
        for (int round = 0; round < 200; round++)
        {
            var record = FooDataRef.New(allocator);
            int succeeded = 0;
            using var start = new Barrier(2);
            var tasks = Enumerable.Range(0, 2).Select(_ => Task.Run(() =>
            {
                start.SignalAndWait();
                try
                {
                    record.Delete(allocator);
                    Interlocked.Increment(ref succeeded);
                }
                catch (InvalidOperationException)
                {
                }
            })).ToArray();
            await Task.WhenAll(tasks);
            Assert.Equal(1, succeeded);
        }
    }

    [Fact]
    public void Unchecked_handles_read_write_and_Delete_once()
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = false });
        var a = FooDataUncheckedRef.New(allocator);
        a.Id = 5;
        a.Flag = 3;
        Assert.Equal((5L, (byte)3), (a.Id, a.Flag));
        Assert.True(a.IsAllocated);
        a.Delete(allocator);
        Assert.False(a.IsAllocated);
        Assert.Contains("already deleted", Assert.Throws<InvalidOperationException>(() => a.Delete(allocator)).Message);
        Assert.Throws<ArgumentException>(() => default(FooDataUncheckedRef).Delete(allocator));
    }

    [Fact]
    public void A_checked_handle_converts_to_an_unchecked_one_of_the_same_record()
    {
        using var allocator = new TypeAllocator();
        var a = FooDataRef.New(allocator);
        var raw = a.AsUnchecked();
        raw.Count = 9;
        Assert.Equal(9, a.Count);
        raw.Delete(allocator);
        Assert.False(a.IsAllocated);
        Assert.Throws<InvalidOperationException>(() => a.Count);
    }

    [Fact]
    public void Large_records_go_through_the_large_block_path_in_both_forms()
    {
        using var allocator = new TypeAllocator();
        var a = LargeRef.New(allocator);
        a.Far = 1;
        a.Near = 2;
        Assert.Equal((1L, 2), (a.Far, a.Near));
        a.Delete(allocator);
        Assert.Throws<InvalidOperationException>(() => a.Far);
        var b = LargeUncheckedRef.New(allocator);
        b.Far = 3;
        b.Delete(allocator);
        Assert.Throws<InvalidOperationException>(() => b.Delete(allocator));
    }

    [Fact]
    public void Properties_named_like_handle_members_are_implemented_explicitly()
    {
        using var allocator = new TypeAllocator();
        var r = ReservedNamesRef.New(allocator);
        IReservedNames view = r;
        view.Handle = 3;
        view.IsAllocated = false;
        view.Delete = 4;
        Assert.True(r.IsAllocated); // the handle's own member, not the record's field
        Assert.Equal((3, false, 4), (view.Handle, view.IsAllocated, view.Delete));
        r.Delete(allocator);
    }

    [Fact]
    public void Shared_and_same_name_properties_of_base_interfaces_land_in_their_fields()
    {
        using var allocator = new TypeAllocator();
        var d = DerivedRef.New(allocator);
        ((IBase)d).Shared = -1;
        ((IOtherBase)d).Shared = long.MaxValue;
        d.Same = 8; // one field for IBase.Same, IOtherBase.Same and IDerived.Same
        d.Item = 12;
        Assert.Equal((-1, long.MaxValue, 8L, 8L, (short)12), (((IBase)d).Shared, ((IOtherBase)d).Shared, ((IBase)d).Same, ((IOtherBase)d).Same, d.Item));
        d.Delete(allocator);
    }

    [Fact]
    // Records up to the largest slab class (8 KB). A larger record is a block of its own, for which the slab allocator
    // creates its chunk object; that path is the slab allocator's, not the handle's.
    public void New_and_Delete_of_struct_handles_allocate_nothing_on_the_managed_heap()
    {
        using var checkedAllocator = new TypeAllocator();
        using var uncheckedAllocator = new TypeAllocator(new TypeAllocatorOptions { Checked = false });
        var heap = checkedAllocator.GetThreadHeap();
        void Pairs()
        {
            for (int i = 0; i < 10_000; i++)
            {
                var a = FooDataRef.New(checkedAllocator);
                a.Count = i;
                a.Delete(checkedAllocator);
                var b = FooDataUncheckedRef.New(uncheckedAllocator);
                b.Count = i;
                b.Delete(uncheckedAllocator);
                var c = FooDataRef.New(uncheckedAllocator);
                c.Delete(uncheckedAllocator);
                var d = FooDataRef.New(heap);
                d.Count = i;
                d.Delete(heap);
                var e = FooDataUncheckedRef.New(heap);
                e.Delete(heap);
            }
        }
        Pairs(); // warm: thread caches, tiering
        Assert.Equal(0, Manaloc.Tests.Allocations.OnThisThread(Pairs));
    }

    [Fact]
    public void A_thread_heap_makes_and_deletes_records_that_the_allocator_also_knows()
    {
        using var allocator = new TypeAllocator();
        var heap = allocator.GetThreadHeap();
        Assert.Same(heap, allocator.GetThreadHeap());
        Assert.Same(allocator, heap.Allocator);
        Assert.Equal(Environment.CurrentManagedThreadId, heap.ThreadId);
        var a = FooDataRef.New(heap);
        var b = FooDataUncheckedRef.New(heap);
        a.Count = 1;
        b.Count = 2;
        a.Delete(allocator); // made through the heap, deleted through the allocator
        b.Delete(heap);
        Assert.False(a.IsAllocated);
        Assert.Contains("already deleted", Assert.Throws<InvalidOperationException>(() => a.Delete(heap)).Message);
        Assert.Contains("already deleted", Assert.Throws<InvalidOperationException>(() => b.Delete(heap)).Message);
        var c = FooDataRef.New(allocator); // and the other way round
        c.Delete(heap);
        Assert.Throws<ArgumentException>(() => default(FooDataRef).Delete(heap));
        using var other = new TypeAllocator();
        var theirs = FooDataRef.New(other);
        Assert.Contains("another TypeAllocator", Assert.Throws<ArgumentException>(() => theirs.Delete(heap)).Message);
        Assert.True(theirs.IsAllocated);
        theirs.Delete(other);
        var stats = allocator.GetSlabStatistics();
        Assert.Equal(stats.Allocations, stats.Frees);
    }

    [Fact]
    public void A_thread_heap_throws_after_its_allocators_Dispose_and_on_another_thread()
    {
        var allocator = new TypeAllocator();
        var heap = allocator.GetThreadHeap();
        var live = FooDataRef.New(heap);
        Exception? error = null;
        var made = new List<FooDataRef>();
        var thread = new Thread(() =>
        {
            try
            {
                for (int i = 0; i < 2; i++) made.Add(FooDataRef.New(heap));
            }
            catch (InvalidOperationException e)
            {
                error = e;
            }
        });
        thread.Start();
        thread.Join();
        Assert.Contains("belongs to managed thread", Assert.IsType<InvalidOperationException>(error).Message);
        Assert.Empty(made); // the first New on the other thread was refused
        allocator.Dispose();
        Assert.Equal($"TypeAllocator '{allocator.Name}'", Assert.Throws<ObjectDisposedException>(() => FooDataRef.New(heap)).ObjectName);
        Assert.Equal($"TypeAllocator '{allocator.Name}'", Assert.Throws<ObjectDisposedException>(() => live.Delete(heap)).ObjectName);
        Assert.Throws<ObjectDisposedException>(() => live.Count);
        Assert.Throws<ObjectDisposedException>(() => allocator.GetThreadHeap());
    }
}
