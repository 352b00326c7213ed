using Manaloc.Memory;
using Manaloc.Memory.CompilerServices;

namespace Manaloc.Memory.Records.Tests;

/// <summary>
/// A record array of a [NativeRecord] interface as a list: <c>foreach</c>, the indexer and LINQ hand out the generated item
/// class, which stays on its record and, checked, throws after the array's Dispose; <c>Scan()</c> stays allocation-free.
/// </summary>
public class RecordArrayItemTests
{
    private static RecordArray<IFooData> Numbered(TypeAllocator allocator, int length)
    {
        var array = allocator.NewArray<IFooData>(length);
        for (int i = 0; i < length; i++) array.MoveTo(i).Count = i;
        return array;
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Saving_the_items_of_a_foreach_keeps_each_record_with_the_compiled_class(bool isChecked)
    {
        long emittedBefore = TypeAllocator.GeneratedTypeCount;
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked });
        using var arr = Numbered(allocator, 5);
        var saved = new List<IFooData>();
        foreach (var o in arr) if (o.Count % 2 == 0) saved.Add(o);
        Assert.Equal([0, 2, 4], saved.Select(o => o.Count));
        Assert.All(saved, o => Assert.Same(typeof(IFooData).Assembly, o.GetType().Assembly)); // generated at compile time
        Assert.All(saved, o => Assert.IsAssignableFrom<CompiledRecordView>(o));
        Assert.Equal(emittedBefore, TypeAllocator.GeneratedTypeCount);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void LINQ_over_the_array_reads_and_writes_the_right_records(bool isChecked)
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked });
        using var arr = Numbered(allocator, 5);
        Assert.Equal([0, 2, 4], arr.Where(o => o.Count % 2 == 0).Select(o => o.Count).ToList());
        Assert.Equal(3, arr.First(o => o.Count == 3).Count);
        Assert.Equal(5, arr.Count());
        Assert.Equal(2, arr.Count(o => o.Count > 2));
        foreach (var item in arr.Where(o => o.Count >= 3).ToList()) item.Id = item.Count * 100L;
        Assert.Equal([0L, 0L, 0L, 300L, 400L], arr.Select(o => o.Id));
        Assert.Equal(400L, arr[4].Id);
        Assert.Equal(arr[1], arr[1]);
        Assert.Contains(arr[1], arr);
    }

    [Fact]
    public void A_saved_item_used_after_the_arrays_Dispose_throws_naming_the_array()
    {
        using var allocator = new TypeAllocator();
        var arr = Numbered(allocator, 5);
        var saved = arr.Where(o => o.Count == 2).ToList()[0];
        var indexed = arr[3];
        arr.Dispose();
        Assert.Contains("RecordArray<IFooData>", Assert.Throws<ObjectDisposedException>(() => saved.Count).Message);
        Assert.Contains("RecordArray<IFooData>", Assert.Throws<ObjectDisposedException>(() => indexed.Id = 1).Message);
        Assert.False(((NativeRecord)(object)saved).IsAllocated);
        Assert.Throws<ObjectDisposedException>(() => arr[0]);
    }

    [Fact]
    public void A_saved_item_used_after_the_allocators_Dispose_throws_object_disposed()
    {
        var allocator = new TypeAllocator(new TypeAllocatorOptions { Name = "generated-items" });
        var arr = Numbered(allocator, 5);
        var saved = arr[2];
        allocator.Dispose();
        var error = Assert.Throws<ObjectDisposedException>(() => saved.Count);
        Assert.Contains("RecordArray<IFooData>", error.Message);
        Assert.Contains("TypeAllocator 'generated-items'", error.Message);
    }

    [Fact]
    public void An_unchecked_arrays_saved_item_reads_the_dead_array_after_Dispose()
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = false });
        var arr = Numbered(allocator, 5);
        var saved = arr[4];
        arr.Dispose();
        Assert.Equal(4, saved.Count); // bare: documented, the memory stays while the item does
        Assert.False(((NativeRecord)(object)saved).IsAllocated);
        Assert.Throws<ObjectDisposedException>(() => arr.ToList());
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void An_empty_array_is_an_empty_list(bool isChecked)
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked });
        using var empty = allocator.NewArray<IFooData>(0);
        Assert.Empty(empty);
        Assert.Null(empty.FirstOrDefault());
        Assert.Throws<ArgumentOutOfRangeException>(() => empty[0]);
        foreach (var _ in empty.Scan()) Assert.Fail("no records");
    }

    [Fact]
    public void The_scan_still_allocates_nothing()
    {
        using var allocator = new TypeAllocator();
        using var arr = Numbered(allocator, 10_000);
        Pass(arr);
        Assert.Equal(0, Manaloc.Tests.Allocations.OnThisThread(() => Pass(arr)));
        Assert.True(arr[9_999].Id >= 2);

        static void Pass(RecordArray<IFooData> array)
        {
            foreach (var r in array.Scan()) r.Id += 1;
        }
    }
}
