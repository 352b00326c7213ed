using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

public sealed class LayoutOverflowTests
{
    public interface IOffsetNearMax { [RecordOffset(int.MaxValue - 3)] int X { get; set; } }

    [CacheLineAligned]
    public interface IAlignedOffsetNearMax { [RecordOffset(int.MaxValue - 63)] int X { get; set; } }

    public interface IFarButFine { [RecordOffset(1 << 20)] int X { get; set; } }

    [Theory]
    [InlineData(typeof(IOffsetNearMax))]
    [InlineData(typeof(IAlignedOffsetNearMax))]
    public void An_offset_whose_end_or_aligned_size_passes_int_MaxValue_is_rejected(Type type)
    {
        var error = Assert.Throws<ArgumentException>(() => TypeLayout.Of(type));
        Assert.Contains(type.Name, error.Message);
        Assert.Contains("member 'X'", error.Message);
        Assert.Contains("largest record size", error.Message);
    }

    [Fact]
    public void New_refuses_the_overflowing_type_instead_of_writing_past_its_block()
    {
        using var allocator = new TypeAllocator();
        Assert.Throws<ArgumentException>(() => allocator.New<IOffsetNearMax>());
        Assert.Throws<ArgumentException>(() => allocator.New<IAlignedOffsetNearMax>());
    }

    [Fact]
    public void A_large_offset_that_fits_gives_a_size_covering_the_field()
    {
        var layout = TypeLayout.Of<IFarButFine>();
        Assert.Equal((1 << 20) + 4, layout.Size);
        Assert.All(layout.Fields, f => Assert.True(f.Offset + f.Size <= layout.Size));
    }
}
