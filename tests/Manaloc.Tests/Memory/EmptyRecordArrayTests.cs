using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

public sealed class EmptyRecordArrayTests
{
    public interface IWide { long A { get; set; } long B { get; set; } long C { get; set; } }

    public interface ITwo { long X { get; set; } long Y { get; set; } }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Writing_through_the_view_of_an_empty_array_leaves_neighbouring_records_alone(bool isChecked)
    {
        // A fresh allocator: the array's block and the neighbours come from the same new chunk. A thread
        // cache hands a batch out from the highest address down, so records made just before the array
        // sit right above it (where an overrun lands); records on both sides are checked.
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked });
        const int before = 5;
        var neighbours = new ITwo[64];
        for (int i = 0; i < before; i++) neighbours[i] = allocator.New<ITwo>();
        using var empty = allocator.NewArray<IWide>(0);
        for (int i = before; i < neighbours.Length; i++) neighbours[i] = allocator.New<ITwo>();
        for (int i = 0; i < neighbours.Length; i++)
        {
            neighbours[i].X = i;
            neighbours[i].Y = -i;
        }

        Assert.Equal(0, empty.Length);
        var view = empty.View;
        Assert.Equal(0L, view.C);
        view.A = 111;
        view.B = 222;
        view.C = 333;
        var second = empty.CreateView().Value;
        second.C = 444;

        for (int i = 0; i < neighbours.Length; i++)
        {
            Assert.Equal(i, neighbours[i].X);
            Assert.Equal(-i, neighbours[i].Y);
        }
        Assert.Equal(444L, view.C);
        Assert.Throws<ArgumentOutOfRangeException>(() => empty.MoveTo(0));
        foreach (var r in neighbours) allocator.Delete(r);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Foreach_visits_every_record_of_an_array_of_records_without_fields(bool isChecked)
    {
        // Size 0: the scan still steps (stride 1), so a loop runs Length times (found in review: it ran 0 times).
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Checked = isChecked });
        using var records = allocator.NewArray<IEmpty>(5);
        int visited = 0, items = 0;
        foreach (var record in records.Scan())
        {
            Assert.NotNull(record);
            visited++;
        }
        foreach (var record in records)
        {
            Assert.NotNull(record);
            items++;
        }
        Assert.Equal(5, visited);
        Assert.Equal(5, items);
        Assert.Equal(5, records.Distinct().Count()); // one item per record, each its own address
        Assert.Equal(1, records.Stride);
    }
}
