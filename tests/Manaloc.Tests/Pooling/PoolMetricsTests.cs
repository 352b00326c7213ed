using System.Diagnostics.Metrics;
using Manaloc.Buffers;
using Manaloc.Diagnostics;
using Manaloc.Pooling;

namespace Manaloc.Tests.Pooling;

/// <summary>Every instrument of the pooling meter publishes a measurement tagged with the pool's name (the byte instruments for buffer managers only).</summary>
public sealed class PoolMetricsTests
{
    [Fact]
    public void Every_instrument_publishes_for_pools_and_buffer_managers()
    {
        using var pool = new SemiLocalPool<PooledThing>(PoolPolicies.New<PooledThing>(), new PoolOptions { Name = "metrics-pool" });
        using var buffers = new BufferManager(new BufferManagerOptions { Name = "metrics-buffers" });
        pool.Return(pool.Rent());
        buffers.Return(buffers.Rent(100));
        var outstanding = buffers.Rent(1000); // 1,024 bytes rented and not returned

        var seen = new Dictionary<(string Instrument, string Pool), long>();
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == ManalocMeters.PoolingName) l.EnableMeasurementEvents(instrument);
        };
        listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) =>
        {
            string? name = null, kind = null;
            foreach (var tag in tags)
            {
                if (tag.Key == ManalocTelemetry.NameTag) name = tag.Value as string;
                if (tag.Key == ManalocTelemetry.KindTag) kind = tag.Value as string;
            }
            if (name is "metrics-pool" or "metrics-buffers")
            {
                Assert.Equal(name == "metrics-pool" ? "object-pool" : "buffer-manager", kind);
                seen[(instrument.Name, name)] = value;
            }
        });
        listener.Start();
        listener.RecordObservableInstruments();

        foreach (string instrument in PoolMetrics.InstrumentNames)
        {
            bool bytes = instrument.EndsWith("_bytes", StringComparison.Ordinal);
            // An object pool does not know its objects' sizes: it publishes no byte figures rather than zeros.
            Assert.True(seen.ContainsKey((instrument, "metrics-pool")) != bytes, $"{instrument}: the pool's series is {(bytes ? "there" : "missing")}");
            Assert.True(seen.ContainsKey((instrument, "metrics-buffers")), $"{instrument} published nothing for the buffer manager");
        }
        Assert.Equal(1, seen[("manaloc.pool.rents", "metrics-pool")]);
        Assert.Equal(1, seen[("manaloc.pool.retained", "metrics-buffers")]);
        Assert.Equal(128, seen[("manaloc.pool.retained_bytes", "metrics-buffers")]);
        Assert.Equal(1024, seen[("manaloc.pool.rented_bytes", "metrics-buffers")]);
        buffers.Return(outstanding);
    }

    [Fact]
    public void Pools_sharing_a_name_are_one_series_whose_figures_are_their_sums()
    {
        using var first = new SemiLocalPool<PooledThing>(PoolPolicies.New<PooledThing>(), new PoolOptions { Name = "twin-pool" });
        using var second = new SemiLocalPool<PooledThing>(PoolPolicies.New<PooledThing>(), new PoolOptions { Name = "twin-pool" });
        first.Return(first.Rent());
        second.Return(second.Rent());
        second.Return(second.Rent());

        var rents = new List<long>();
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == ManalocMeters.PoolingName && instrument.Name == "manaloc.pool.rents") l.EnableMeasurementEvents(instrument);
        };
        listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) =>
        {
            foreach (var tag in tags)
            {
                if (tag.Key == ManalocTelemetry.NameTag && (string?)tag.Value == "twin-pool") rents.Add(value);
            }
        });
        listener.Start();
        listener.RecordObservableInstruments();

        // One measurement for the shared tag set (an exporter keeps one of repeated tag sets), holding both pools' rents.
        Assert.Equal([3L], rents);
    }
}
