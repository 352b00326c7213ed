using System.Text.Json;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Harness;

public sealed class UnitTests
{
    [Theory]
    [InlineData("bytes", 512.0, "512 B")]
    [InlineData("bytes", 1536.0, "1.5 KiB")]
    [InlineData("bytes", 3.0 * 1024 * 1024, "3 MiB")]
    [InlineData("B/call", 32.0, "32 B/call")]
    [InlineData("ns/op", 1234.0, "1.23 µs/op")]
    [InlineData("ms", 0.5, "500 µs")]
    [InlineData("ms", 2500.0, "2.5 s")]
    [InlineData("ops/s", 4.5e6, "4.5 M ops/s")]
    [InlineData("x", 12.34, "12.3x")]
    [InlineData("datagrams", 7.0, "7 datagrams")]
    public void Values_scale_by_kind_with_binary_sizes(string symbol, double value, string expected)
        => Assert.Equal(expected, Unit.Parse(symbol).Format(value));

    [Fact]
    public void A_symbol_names_one_unit_and_survives_json()
    {
        Unit fromString = "ns/op";
        Assert.Same(Unit.NsPerOp, fromString);
        Assert.True(Unit.Parse("ms") == "ms");
        Assert.Equal(UnitKind.Other, Unit.Parse("CPU ns/item").Kind);
        Assert.Equal("\"B/op\"", JsonSerializer.Serialize(Unit.BytesPerOp, LabJson.Options));
        Assert.Same(Unit.BytesPerOp, JsonSerializer.Deserialize<Unit>("\"B/op\"", LabJson.Options));
        Assert.Throws<ArgumentException>(() => Unit.Parse(" "));
    }

    [Fact]
    public void Run_mode_picks_one_value_per_mode()
    {
        Assert.Equal(1, RunSettings.Smoke().Pick(1, 2, 3));
        Assert.Equal(2, RunSettings.Quick().Pick(1, 2, 3));
        Assert.Equal(3, RunSettings.Full().Pick(1, 2, 3));
        Assert.Equal("quick", RunSettings.NameOf(RunMode.Quick));
        Assert.Equal(RunMode.Full, RunSettings.For(RunMode.Full).Mode);
    }
}
