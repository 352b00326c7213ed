using Manaloc.Platform;

namespace Manaloc.Tests.Platform;

public sealed class AffinityMaskTests
{
    [Theory]
    [InlineData("0", new[] { 0 })]
    [InlineData("0-3", new[] { 0, 1, 2, 3 })]
    [InlineData("0-1,4,6-7\n", new[] { 0, 1, 4, 6, 7 })]
    [InlineData("", new int[0])]
    public void Processor_lists_parse(string text, int[] expected) => Assert.Equal(expected, AffinityMask.ParseList(text));

    [Theory]
    [InlineData("a")]
    [InlineData("3-1")]
    [InlineData("0-")]
    [InlineData("-1")]
    [InlineData("0,,1")]
    public void Malformed_lists_are_null(string text) => Assert.Null(AffinityMask.ParseList(text));

    [Fact]
    public void Group_masks_number_processors_by_group()
    {
        Assert.Equal([64, 65, 127], AffinityMask.ToProcessors(0x8000_0000_0000_0003UL, group: 1));
        Assert.Empty(AffinityMask.ToProcessors(0UL, group: 0));
    }

    [Fact]
    public void Kernel_masks_use_bit_i_mod_8_of_byte_i_div_8()
        => Assert.Equal([1, 8, 23], AffinityMask.ToProcessors([0b10, 0b1, 0b1000_0000]));
}
