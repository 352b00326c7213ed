using System.Diagnostics.Metrics;
using Manaloc.Diagnostics;
using Manaloc.Memory;

namespace Manaloc.Tests.Memory;

public sealed class MemoryMetricsTests
{
    [Fact]
    public void Observable_instruments_report_live_objects_by_type_and_reserved_bytes()
    {
        string name = $"metrics-{Guid.NewGuid():N}";
        using var allocator = new TypeAllocator(new TypeAllocatorOptions { Name = name });
        var records = Enumerable.Range(0, 5).Select(_ => allocator.New<IFooData>()).ToArray();
        using var big = allocator.NewArray<IBig>(3);

        var seen = new Dictionary<string, long>();
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == ManalocMeters.MemoryName) l.EnableMeasurementEvents(instrument);
        };
        listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) =>
        {
            string? allocatorTag = null, typeTag = null;
            foreach (var tag in tags)
            {
                if (tag.Key == ManalocTelemetry.NameTag) allocatorTag = tag.Value as string;
                if (tag.Key == "type") typeTag = tag.Value as string;
            }
            if (allocatorTag is not null && allocatorTag.StartsWith(name, StringComparison.Ordinal))
            {
                lock (seen) seen[$"{instrument.Name}|{typeTag}"] = value;
            }
        });
        listener.Start();
        listener.RecordObservableInstruments();

        Assert.Equal(5, seen[$"manaloc.memory.objects.live|{nameof(IFooData)}"]);
        Assert.Equal(1, seen["manaloc.memory.objects.live|RecordArray<IBig>"]);
        Assert.True(seen["manaloc.memory.reserved|"] >= 128 * 1024);
        Assert.True(seen["manaloc.memory.chunks|"] >= 1);
        Assert.Equal(6, seen["manaloc.memory.blocks.live|"]);
        Assert.Equal(6, allocator.CountLiveObjects());
        Assert.Equal(5, allocator.GetLiveObjects().Entries.Single(e => e.TypeName == nameof(IFooData)).Count);
        GC.KeepAlive(records);
    }

    [Fact]
    public void The_record_pool_gauge_counts_the_chunks_a_disposed_allocator_left_for_reuse()
    {
        long pooled = -1;
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == ManalocMeters.MemoryName && instrument.Name == "manaloc.memory.record_pool") l.EnableMeasurementEvents(instrument);
        };
        listener.SetMeasurementEventCallback<long>((_, value, tags, _) =>
        {
            foreach (var tag in tags) Assert.Equal((ManalocTelemetry.KindTag, (object?)"record-pool"), (tag.Key, tag.Value));
            pooled = value;
        });
        listener.Start();
        var allocator = new TypeAllocator();
        var records = Enumerable.Range(0, 100).Select(_ => allocator.New<IPoolSized>()).ToArray(); // 3 KB records: a size class of their own here
        allocator.Dispose(); // its chunks wait in the pool
        listener.RecordObservableInstruments();
        Assert.True(pooled >= 2 * 128 * 1024, $"{pooled} B pooled after disposing an allocator of {records.Length} 3 KB records");
    }
}

/// <summary>A record of about 3 KB (the 3072-byte class), which no other test uses.</summary>
public interface IPoolSized
{
    [RecordOffset(3000)] long Last { get; set; }
}
