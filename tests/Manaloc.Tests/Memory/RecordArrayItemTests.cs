using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

/// <summary>The record of the newcomer trial: one property, as a user first writes one.</summary>
public interface ITrialRecord
{
    int A { get; set; }
}

/// <summary>
/// A record array as a list: <c>foreach</c>, the indexer and LINQ hand out items that stay on their records (the emitted
/// implementation; the generated one has the same tests in Manaloc.Generators.Tests).
/// </summary>
public sealed class RecordArrayItemTests
{
    private static RecordArray<ITrialRecord> Numbered(TypeAllocator allocator, int length)
    {
        var array = allocator.NewArray<ITrialRecord>(length);
        for (int i = 0; i < length; i++) array.MoveTo(i).A = i;
        return array;
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Saving_the_items_of_a_foreach_keeps_each_record(bool isChecked)
    {
        // The newcomer trial, as written: it used to give 4, 4, 4 (every item was the one moving view).
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked });
        using var arr = Numbered(allocator, 5);
        var saved = new List<ITrialRecord>();
        foreach (var o in arr) if (o.A % 2 == 0) saved.Add(o);
        Assert.Equal([0, 2, 4], saved.Select(o => o.A));
        arr.MoveTo(1); // moving the view moves no item
        Assert.Equal([0, 2, 4], saved.Select(o => o.A));
        Assert.Equal(3, saved.Distinct().Count());
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Linq_over_the_array_reads_and_writes_the_right_records(bool isChecked)
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked });
        using var arr = Numbered(allocator, 5);
        Assert.Equal([0, 2, 4], arr.Where(o => o.A % 2 == 0).Select(o => o.A).ToList());
        Assert.Equal(3, arr.First(o => o.A == 3).A);
        Assert.Equal(0, arr.First().A);
        Assert.Equal(4, arr.Last().A);
        Assert.Equal(5, arr.Count());
        Assert.Equal(3, arr.Count(o => o.A > 1));
        Assert.Equal(10, arr.Sum(o => o.A));
        Assert.Equal([4, 3, 2, 1, 0], arr.OrderByDescending(o => o.A).Select(o => o.A));
        Assert.Equal(2, arr.ElementAt(2).A);
        IReadOnlyList<ITrialRecord> list = arr;
        Assert.Equal(5, list.Count);
        Assert.Equal(3, list[3].A);

        // Writes through items that LINQ selected reach the records themselves.
        foreach (var odd in arr.Where(o => o.A % 2 == 1).ToList()) odd.A *= 10;
        Assert.Equal([0, 10, 2, 30, 4], arr.Select(o => o.A));
        for (int i = 0; i < arr.Length; i++) Assert.Equal(i % 2 == 1 ? i * 10 : i, arr.MoveTo(i).A);
    }

    [Fact]
    public void The_indexer_gives_an_item_that_stays_on_its_record()
    {
        using var allocator = new TypeAllocator();
        using var arr = Numbered(allocator, 5);
        var third = arr[3];
        arr[1].A = 100;
        Assert.Equal(3, third.A);
        Assert.Equal(100, arr.MoveTo(1).A);
        third.A = 33;
        Assert.Equal(33, arr.MoveTo(3).A);
        Assert.Equal(33, third.A); // the view moved to 3 and back elsewhere; the item did not
        arr.MoveTo(0);
        Assert.Equal(33, third.A);
        var error = Assert.Throws<ArgumentOutOfRangeException>(() => arr[5]);
        Assert.Contains("[0, 5)", error.Message);
        Assert.Throws<ArgumentOutOfRangeException>(() => arr[-1]);
        Assert.False(((NativeRecord)(object)third).IsView);
        Assert.True(((NativeRecord)(object)arr.View).IsView);
        Assert.True(((NativeRecord)(object)third).IsAllocated);
        Assert.Contains("item", third.ToString());
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Items_of_one_record_are_equal_and_the_array_finds_them(bool isChecked)
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked });
        using var arr = Numbered(allocator, 5);
        using var other = Numbered(allocator, 5);
        Assert.NotSame(arr[2], arr[2]); // a new object per call
        Assert.Equal(arr[2], arr[2]);
        Assert.Equal(arr[2].GetHashCode(), arr[2].GetHashCode());
        Assert.NotEqual(arr[2], arr[3]);
        Assert.NotEqual(arr[2], other[2]);
        Assert.NotEqual(arr[2], arr.MoveTo(2)); // the view shows record 2 now, but it is not bound to it
        Assert.Equal(arr.MoveTo(2), arr.View); // a view equals itself
        Assert.Contains(arr[2], arr);
        Assert.DoesNotContain(other[2], arr);
        Assert.Equal(3, arr.ToList().IndexOf(arr[3]));
        Assert.Equal(5, arr.Concat(arr).Distinct().Count());
        Assert.Equal(5, new HashSet<ITrialRecord>(arr.Concat(arr.Reverse())).Count);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void A_saved_item_used_after_the_arrays_Dispose_throws_naming_the_array(bool fromLinq)
    {
        using var allocator = new TypeAllocator();
        var arr = Numbered(allocator, 5);
        var saved = fromLinq ? arr.Where(o => o.A == 2).ToList()[0] : arr[2];
        Assert.Equal(2, saved.A);
        arr.Dispose();
        Assert.False(((NativeRecord)(object)saved).IsAllocated);
        var read = Assert.Throws<ObjectDisposedException>(() => saved.A);
        Assert.Contains("RecordArray<ITrialRecord>", read.Message);
        Assert.Contains("disposed", read.Message);
        var write = Assert.Throws<ObjectDisposedException>(() => saved.A = 1);
        Assert.Contains("RecordArray<ITrialRecord>", write.Message);
        Assert.Contains("RecordArray<ITrialRecord>", Assert.Throws<ObjectDisposedException>(() => arr[0]).Message);
        Assert.Throws<ObjectDisposedException>(() => arr.ToList());
        Assert.Throws<ObjectDisposedException>(() => arr.Count());
    }

    [Fact]
    public void A_saved_item_used_after_the_allocators_Dispose_throws_object_disposed_naming_the_allocator_and_the_array()
    {
        var allocator = new TypeAllocator(new TypeAllocatorOptions { Name = "trial" });
        var arr = Numbered(allocator, 5);
        var saved = new List<ITrialRecord>();
        foreach (var o in arr) saved.Add(o);
        allocator.Dispose();
        foreach (var item in saved)
        {
            var error = Assert.Throws<ObjectDisposedException>(() => item.A);
            Assert.Contains("RecordArray<ITrialRecord>", error.Message);
            Assert.Contains("TypeAllocator 'trial'", error.Message);
        }
        Assert.Contains("TypeAllocator 'trial'", Assert.Throws<ObjectDisposedException>(() => arr[1]).Message);
        arr.Dispose(); // nothing left to free
    }

    [Fact]
    public void An_item_made_before_Dispose_throws_at_its_first_access_afterwards_with_nothing_tracking_it()
    {
        // Many items, none kept by the array: each checks the array's stamp itself, so every one of them throws.
        using var allocator = new TypeAllocator();
        var arr = Numbered(allocator, 1000);
        var items = arr.ToArray();
        var copy = arr.Select(o => o).ToList();
        arr.Dispose();
        Assert.All(items, item => Assert.Throws<ObjectDisposedException>(() => item.A));
        Assert.All(copy, item => Assert.Throws<ObjectDisposedException>(() => item.A = 5));
    }

    [Fact]
    public void An_unchecked_arrays_items_are_bare_after_Dispose_they_read_the_dead_array_and_nothing_new_is_handed_out()
    {
        // Documented: unchecked items (like unchecked views) are not checked on access. A saved one reads and writes the dead
        // array, whose memory it keeps alive (never another array's); the array refuses to hand out anything more.
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = false });
        var arr = Numbered(allocator, 5);
        var saved = arr[4];
        arr.Dispose();
        Assert.False(((NativeRecord)(object)saved).IsAllocated);
        Assert.Equal(4, saved.A);
        saved.A = 40;
        Assert.Equal(40, saved.A);
        Assert.Throws<ObjectDisposedException>(() => arr[4]);
        Assert.Throws<ObjectDisposedException>(() => { foreach (var o in arr) o.A++; });
        Assert.Throws<ObjectDisposedException>(() => arr.First());
        using var next = allocator.NewArray<ITrialRecord>(5);
        saved.A = 41;
        Assert.All(next, o => Assert.Equal(0, o.A)); // the dead array's writes do not land in the next one
    }

    [Fact]
    public void Delete_refuses_an_item_and_says_to_dispose_the_array()
    {
        using var allocator = new TypeAllocator();
        using var arr = Numbered(allocator, 3);
        var error = Assert.Throws<ArgumentException>(() => allocator.Delete(arr[1]));
        Assert.Contains("item of a RecordArray<ITrialRecord>", error.Message);
        Assert.Equal(1, arr[1].A);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void An_empty_array_is_an_empty_list(bool isChecked)
    {
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked });
        using var empty = allocator.NewArray<ITrialRecord>(0);
        foreach (var _ in empty) Assert.Fail("no records");
        Assert.Empty(empty);
        Assert.False(empty.Any());
        Assert.Empty(empty.Where(o => o.A == 0).ToList());
        Assert.Null(empty.FirstOrDefault());
        Assert.Throws<InvalidOperationException>(() => empty.First());
        Assert.Throws<ArgumentOutOfRangeException>(() => empty[0]);
        int count = ((IReadOnlyCollection<ITrialRecord>)empty).Count;
        Assert.Equal(0, count);
    }

    [Fact]
    public void Each_item_is_one_small_object_and_the_array_keeps_none()
    {
        // The documented cost of the item path: one 40-byte object per item handed out, no reference kept by the array.
        using var allocator = new TypeAllocator();
        using var arr = Numbered(allocator, 1000);
        _ = arr[0].A; // the item class is resolved on the first item
        long bytes = Allocations.OnThisThread(() =>
        {
            for (int i = 0; i < arr.Length; i++) _ = arr[i];
        });
        Assert.Equal(40, bytes / arr.Length);
        var weak = Forget(arr);
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
        Assert.False(weak.IsAlive, "the array kept an item it handed out");

        [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
        static WeakReference Forget(RecordArray<ITrialRecord> array) => new(array[7]);
    }

    [Fact]
    public void Enumerating_as_an_interface_twice_and_resetting_gives_the_same_records()
    {
        using var allocator = new TypeAllocator();
        using var arr = Numbered(allocator, 3);
        using var e = ((IEnumerable<ITrialRecord>)arr).GetEnumerator();
        var first = new List<int>();
        while (e.MoveNext()) first.Add(e.Current.A);
        Assert.False(e.MoveNext());
        e.Reset();
        Assert.True(e.MoveNext());
        Assert.Same(e.Current, e.Current); // Current is one item until the next step
        Assert.Equal(0, e.Current.A);
        Assert.Equal([0, 1, 2], first);
    }
}
