using Manaloc.Pooling;
using Microsoft.Extensions.Time.Testing;

namespace Manaloc.Tests.Pooling;

/// <summary>Which gen-2 collections start a trimming pass: every one under pressure, else one per interval.</summary>
public sealed class Gen2TrimGateTests
{
    [Fact]
    public void Passes_the_first_collection_then_one_per_interval()
    {
        var clock = new FakeTimeProvider();
        var gate = new Gen2TrimGate(clock, TimeSpan.FromSeconds(1));
        Assert.True(gate.Pass(pressure: false));
        Assert.False(gate.Pass(pressure: false));
        clock.Advance(TimeSpan.FromMilliseconds(999));
        Assert.False(gate.Pass(pressure: false));
        clock.Advance(TimeSpan.FromMilliseconds(1));
        Assert.True(gate.Pass(pressure: false));
        Assert.False(gate.Pass(pressure: false)); // the interval counts from the last pass
    }

    [Fact]
    public void Memory_pressure_always_passes_and_restarts_the_interval()
    {
        var clock = new FakeTimeProvider();
        var gate = new Gen2TrimGate(clock, TimeSpan.FromSeconds(1));
        Assert.True(gate.Pass(pressure: false));
        clock.Advance(TimeSpan.FromMilliseconds(600));
        Assert.True(gate.Pass(pressure: true));
        clock.Advance(TimeSpan.FromMilliseconds(600));
        Assert.False(gate.Pass(pressure: false)); // 600 ms after the pressure pass
    }

    [Fact]
    public void A_zero_interval_passes_every_collection()
    {
        var gate = new Gen2TrimGate(new FakeTimeProvider(), TimeSpan.Zero);
        for (int i = 0; i < 3; i++) Assert.True(gate.Pass(pressure: false));
    }
}
