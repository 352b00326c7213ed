using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Harness;

public sealed class FormatCountTests
{
    [Theory]
    [InlineData(0, "0 rounds")]
    [InlineData(1, "1 round")]
    [InlineData(2, "2 rounds")]
    public void One_takes_the_singular(long count, string expected) => Assert.Equal(expected, Format.Count(count, "round"));

    [Fact]
    public void Irregular_plurals_and_number_formats_are_kept()
    {
        Assert.Equal("1 child process", Format.Count(1, "child process", "child processes"));
        Assert.Equal("3 child processes", Format.Count(3, "child process", "child processes"));
        Assert.Equal("12,000 datagrams", Format.Count(12_000, "datagram", format: "N0"));
    }
}
