using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

public sealed class TypeLayoutScaleTests
{
    [Fact]
    public void An_interface_of_2000_properties_is_laid_out_correctly_with_linear_work()
    {
        Type[] types = [typeof(long), typeof(int), typeof(byte), typeof(double), typeof(short), typeof(Guid)];
        var properties = Enumerable.Range(0, 2000).Select(i => ($"P{i}", types[i % types.Length], true, true)).ToList();
        var type = RuntimeInterfaces.Define(properties);

        long visitedBefore = RecordPlacement.OccupiedRanges.t_visited;
        var layout = TypeLayout.Of(type);
        long visited = RecordPlacement.OccupiedRanges.t_visited - visitedBefore;

        Assert.Equal(2000, layout.Fields.Count);
        // Packed with no gaps (largest alignment first; padding only at the end), every field naturally aligned and none overlapping.
        Assert.True(layout.Padding < layout.Alignment, $"{layout.Padding} bytes of padding");
        long end = 0;
        foreach (var field in layout.Fields)
        {
            Assert.Equal(0, field.Offset % field.Alignment);
            Assert.True(field.Offset >= end, $"{field.Name} overlaps the field before it");
            end = field.Offset + field.Size;
        }
        // The work, not the time (no timed assertion on a shared machine): placed fields merge into few ranges, so each first fit visits a handful, not every field placed before.
        Assert.True(visited <= 4 * 2000, $"the first-fit searches visited {visited} ranges for 2000 fields");
    }
}
