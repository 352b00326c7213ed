using Manaloc.Lab.Experiments;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Experiments;

/// <summary>The Memory area's experiments produce the figures their verdicts and the targets rely on.</summary>
public sealed class MemoryExperimentsTests
{
    [Fact]
    public void TypedMemory_shows_both_layouts_and_a_bulk_scan_that_allocates_nothing()
    {
        var result = ExperimentRunner.Run(new TypedMemory(), RunSettings.Smoke());
        Assert.Null(result.Error);
        var layout = Assert.Single(result.Tables);
        Assert.Contains(layout.Rows, r => r[0] == "record" && r[3] == "21" && r[6] == "24");
        var bulkScan = Assert.Single(result.Measurements, m => m.Variant == "RecordArray (bulk)" && m.Parameters["op"] == "scan");
        Assert.True(bulkScan.AllocatedBytes < 1024, $"the bulk scan allocated {bulkScan.AllocatedBytes} bytes");
        foreach (var variant in new[] { "class instances", "AllocHGlobal per object", "TypeAllocator", "TypeAllocator unchecked" })
        {
            Assert.Contains(result.Measurements, m => m.Variant == variant && m.Parameters["op"] == "new+delete");
            Assert.Contains(result.Measurements, m => m.Variant == variant && m.Parameters["op"] == "get+set");
        }
        Assert.Contains("New+Delete", result.Verdict.Text, StringComparison.Ordinal);
    }

    [Fact]
    public void FirstUse_never_generates_on_New_after_PreGenerate()
    {
        var result = ExperimentRunner.Run(new FirstUse(), RunSettings.Smoke());
        Assert.Null(result.Error);
        var after = Assert.Single(result.Measurements, m => m.Variant == "New after PreGenerate");
        Assert.Equal(0, after.Metrics["generatedOnNew"]);
        Assert.Contains(result.Measurements, m => m.Variant == "New, unseen type");
    }

    [Fact]
    public void HeapContention_measures_every_allocator_on_two_threads()
    {
        var result = ExperimentRunner.Run(new HeapContention(), RunSettings.Smoke());
        Assert.Null(result.Error);
        foreach (var variant in new HeapContention().Variants)
        {
            Assert.Contains(result.Measurements, m => m.Variant == variant && m.Threads == 2 && m.OpsPerSecond > 0);
        }
        Assert.NotEqual(Verdict.NotComparable, result.Verdict.Verdict);
    }
}
