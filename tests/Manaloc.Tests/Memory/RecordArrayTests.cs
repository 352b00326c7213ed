using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

public sealed class RecordArrayTests
{
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
    public void Scanning_and_updating_allocates_nothing()
    {
        using var allocator = new TypeAllocator();
        using var records = allocator.NewArray<IFooData>(100_000);
        Pass(records);
        long before = GC.GetAllocatedBytesForCurrentThread();
        Pass(records);
        Pass(records);
        long after = GC.GetAllocatedBytesForCurrentThread();
        Assert.Equal(0, after - before);
        Assert.Equal(3 * 2, records.MoveTo(12345).Bar);

        static void Pass(RecordArray<IFooData> records)
        {
            foreach (var r in records) r.Bar += 2;
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
        Assert.Throws<InvalidOperationException>(() => view.Bar);
        records.Dispose(); // idempotent
        Assert.Equal(0, allocator.LiveObjectCount);
    }

    [Fact]
    public void Empty_and_cache_line_aligned_arrays_work()
    {
        using var allocator = new TypeAllocator();
        using var empty = allocator.NewArray<IFooData>(0);
        foreach (var _ in empty) Assert.Fail("no records");
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
