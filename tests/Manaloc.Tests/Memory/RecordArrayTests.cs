using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

public sealed class RecordArrayTests
{
    /// <summary>The two loops over an array: the allocation-free scan (one moving view) or the items (one per record).</summary>
    private static void Loop(RecordArray<IFooData> records, bool scan, Action<IFooData> body)
    {
        if (scan)
        {
            foreach (var r in records.Scan()) body(r);
        }
        else
        {
            foreach (var r in records) body(r);
        }
    }

    [Fact]
    public void Records_are_zeroed_visited_in_order_and_updated_in_place()
    {
        using var allocator = new TypeAllocator();
        using var records = allocator.NewArray<IFooData>(1000);
        Assert.Equal(1000, records.Length);
        Assert.Equal(24, records.Stride);
        int i = 0;
        foreach (var r in records)
        {
            Assert.Equal(0, r.Bar);
            r.Bar = i;
            r.Jar = i * 10L;
            i++;
        }
        Assert.Equal(1000, i);
        for (int k = 0; k < records.Length; k++)
        {
            var r = records.MoveTo(k);
            Assert.Equal(k, r.Bar);
            Assert.Equal(k * 10L, r.Jar);
        }
        var second = records.CreateView();
        Assert.Equal(500, second.MoveTo(500).Bar);
        Assert.Equal(999, records.MoveTo(999).Bar);
        Assert.Throws<ArgumentOutOfRangeException>(() => records.MoveTo(1000));
        Assert.Throws<ArgumentOutOfRangeException>(() => records.MoveTo(-1));
    }

    [Fact]
    public void Scanning_with_a_second_view_allocates_nothing_and_leaves_the_arrays_view_where_it_was()
    {
        using var allocator = new TypeAllocator();
        using var records = allocator.NewArray<IFooData>(10_000);
        var view = records.CreateView();
        records.MoveTo(7).Bar = 70;
        int passes = 0;
        Pass(view);
        passes++;
        long allocated = Allocations.OnThisThread(() =>
        {
            Pass(view);
            passes++;
        });
        Assert.Equal(0, allocated);
        Assert.Equal(70 + passes, records.View.Bar); // the array's own view is still at record 7: the scan moved the other view
        Assert.NotSame(records.View, view.Value);
        Assert.Equal(passes, records.MoveTo(9_999).Bar);

        static void Pass(RecordView<IFooData> view)
        {
            foreach (var r in view.Scan()) r.Bar += 1;
        }
    }

    [Fact]
    public void Scanning_and_updating_allocates_nothing()
    {
        using var allocator = new TypeAllocator();
        using var records = allocator.NewArray<IFooData>(100_000);
        Pass(records);
        int runs = 0;
        long allocated = Allocations.OnThisThread(() =>
        {
            Pass(records);
            runs++;
        });
        Assert.Equal(0, allocated);
        Assert.Equal((1 + runs) * 2, records.MoveTo(12345).Bar);

        static void Pass(RecordArray<IFooData> records)
        {
            foreach (var r in records.Scan()) r.Bar += 2;
            for (int i = 0; i < records.Length; i++) records.MoveTo(i).Car += 1;
        }
    }

    [Fact]
    public void Views_throw_after_dispose_and_the_view_cannot_be_deleted()
    {
        using var allocator = new TypeAllocator();
        var records = allocator.NewArray<IFooData>(10);
        var view = records.MoveTo(3);
        Assert.Throws<ArgumentException>(() => allocator.Delete(view));
        Assert.True(((NativeRecord)(object)view).IsView);
        records.Dispose();
        Assert.False(records.IsAllocated);
        Assert.Throws<ObjectDisposedException>(() => view.Bar);
        records.Dispose(); // idempotent
        Assert.Equal(0, allocator.CountLiveObjects());
    }

    [Fact]
    public void Every_view_and_every_way_of_moving_throws_after_the_array_is_disposed()
    {
        using var allocator = new TypeAllocator();
        var records = allocator.NewArray<IFooData>(10);
        var own = records.MoveTo(2);
        var extra = records.CreateView();
        extra.MoveTo(5).Bar = 5;
        records.Dispose();
        Assert.Throws<ObjectDisposedException>(() => own.Bar = 1); // setters too
        Assert.Throws<ObjectDisposedException>(() => extra.Value.Bar);
        Assert.Throws<ObjectDisposedException>(() => extra.MoveTo(1));
        Assert.Throws<ObjectDisposedException>(() => records.MoveTo(1));
        Assert.Throws<ObjectDisposedException>(() => { foreach (var r in records) r.Bar++; });
        Assert.Throws<ObjectDisposedException>(() => { foreach (var r in records.Scan()) r.Bar++; });
        Assert.Throws<ObjectDisposedException>(() => records[0]);
        Assert.Throws<ObjectDisposedException>(() => { foreach (var r in extra.Scan()) r.Bar++; });
        Assert.Throws<ObjectDisposedException>(() => records.CreateView());
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Disposing_the_array_inside_a_loop_stops_the_loop_before_freed_memory_is_touched(bool scan)
    {
        using var allocator = new TypeAllocator();
        var records = allocator.NewArray<IFooData>(10);
        int visited = 0;
        var error = Assert.Throws<ObjectDisposedException>(() => Loop(records, scan, r =>
        {
            r.Bar = ++visited;
            if (visited == 3) records.Dispose();
        }));
        Assert.Equal(3, visited);
        Assert.Contains("RecordArray", error.Message);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Disposing_the_allocator_inside_a_loop_stops_the_loop_with_the_allocators_disposal(bool scan)
    {
        var allocator = new TypeAllocator();
        var records = allocator.NewArray<IFooData>(10);
        int visited = 0;
        var error = Assert.Throws<ObjectDisposedException>(() => Loop(records, scan, r =>
        {
            r.Bar = ++visited;
            if (visited == 3) allocator.Dispose();
        }));
        Assert.Equal(3, visited);
        Assert.Contains("TypeAllocator", error.Message);
    }

    [Fact]
    public void Many_views_of_a_long_lived_array_are_not_kept_alive_by_it()
    {
        using var allocator = new TypeAllocator();
        using var records = allocator.NewArray<IFooData>(4);
        var weak = MakeViews(records, 1000);
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
        Assert.DoesNotContain(weak, w => w.TryGetTarget(out _));
        var kept = records.CreateView(); // the array still works, and still invalidates the views it has
        records.Dispose();
        Assert.Throws<ObjectDisposedException>(() => kept.Value.Bar);

        [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
        static WeakReference<IFooData>[] MakeViews(RecordArray<IFooData> array, int count)
            => Enumerable.Range(0, count).Select(_ => new WeakReference<IFooData>(array.CreateView().MoveTo(1))).ToArray();
    }

    [Fact]
    public void Views_of_a_live_array_throw_object_disposed_after_the_allocator_is_disposed()
    {
        var allocator = new TypeAllocator();
        var records = allocator.NewArray<IFooData>(4);
        var own = records.MoveTo(1);
        var extra = records.CreateView().MoveTo(2);
        allocator.Dispose();
        Assert.Throws<ObjectDisposedException>(() => own.Bar);
        Assert.Throws<ObjectDisposedException>(() => extra.Jar = 1);
        Assert.False(records.IsAllocated);
        records.Dispose(); // nothing left to free
    }

    [Fact]
    public void Arrays_of_an_unchecked_allocator_still_refuse_to_move_after_dispose()
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = false });
        var records = allocator.NewArray<IFooData>(4);
        records.MoveTo(3).Car = 2.5;
        Assert.Equal(2.5, records.MoveTo(3).Car);
        records.Dispose();
        Assert.Throws<ObjectDisposedException>(() => records.MoveTo(0));
        Assert.Throws<ObjectDisposedException>(() => records.CreateView());
    }

    [Theory]
    [InlineData(false, true, true)]
    [InlineData(false, false, true)]
    [InlineData(true, false, true)]
    [InlineData(false, true, false)]
    [InlineData(false, false, false)]
    [InlineData(true, false, false)]
    public void A_loop_stops_at_the_next_record_after_its_array_or_allocator_is_disposed_in_either_mode(bool isChecked, bool disposeAllocator, bool scan)
    {
        // Both loops compare the array's stamp on each step, in both modes (an unchecked item or view would not notice later).
        var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked });
        var records = allocator.NewArray<IFooData>(10);
        int visited = 0;
        var error = Assert.Throws<ObjectDisposedException>(() => Loop(records, scan, r =>
        {
            ++visited;
            if (visited == 3)
            {
                if (disposeAllocator) allocator.Dispose();
                else records.Dispose();
            }
        }));
        Assert.Equal(3, visited);
        Assert.Contains(disposeAllocator ? "TypeAllocator" : "RecordArray", error.Message);
        allocator.Dispose();
    }

    [Fact]
    public void Moving_the_view_inside_a_loop_does_not_move_the_loop()
    {
        using var allocator = new TypeAllocator();
        using var records = allocator.NewArray<IFooData>(5);
        for (int i = 0; i < records.Length; i++) records.MoveTo(i).Bar = i;
        var seen = new List<int>();
        foreach (var r in records.Scan())
        {
            seen.Add(r.Bar);
            records.MoveTo(4); // the same view object: the enumerator keeps its own cursor
        }
        Assert.Equal([0, 1, 2, 3, 4], seen);
    }

    [Fact]
    public void Empty_and_cache_line_aligned_arrays_work()
    {
        using var allocator = new TypeAllocator();
        using var empty = allocator.NewArray<IFooData>(0);
        foreach (var _ in empty) Assert.Fail("no records");
        foreach (var _ in empty.Scan()) Assert.Fail("no records");
        using var aligned = allocator.NewArray<IHotCold>(5);
        Assert.Equal(0, aligned.Stride % 64);
        unsafe
        {
            for (int i = 0; i < aligned.Length; i++)
            {
                aligned.MoveTo(i).Hot = i;
                Assert.Equal(0u, (uint)((nuint)((NativeRecord)(object)aligned.View).Address % 64));
            }
        }
        Assert.Equal(4, aligned.MoveTo(4).Hot);
        Assert.Throws<ArgumentOutOfRangeException>(() => allocator.NewArray<IFooData>(-1));
    }
}
