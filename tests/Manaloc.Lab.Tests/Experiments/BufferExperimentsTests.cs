using Manaloc.Lab.Experiments;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Experiments;

/// <summary>pipelines, buffer-writer and streams in smoke mode: every variant and case measured, and the targets judged.</summary>
public sealed class BufferExperimentsTests
{
    [Fact]
    public void Pipelines_measures_both_pools_at_both_segment_sizes_and_judges_the_targets()
    {
        var result = ExperimentRunner.Run(new Pipelines(), RunSettings.Smoke());
        Assert.Null(result.Error);
        foreach (string variant in new[] { "MemoryPool.Shared", "BufferMemoryPool" })
        {
            foreach (int segment in new[] { 4096, 65536 })
            {
                foreach (string measure in new[] { "timed", "move" })
                    Assert.Contains(result.Measurements, m => m.Variant == variant && m.Parameters["segment"] == segment && m.Parameters["measure"] == measure);
            }
        }
        Assert.Equal(4, result.Verdict.Targets.Count);
        Assert.All(result.Verdict.Targets, t => Assert.NotNull(t.Today));
        Assert.Contains(result.Notes, n => n.Contains("not the full run's 1 GiB", StringComparison.Ordinal));
    }

    [Fact]
    public void Buffers_allocates_a_fixed_64_MiB_a_sample_with_new_byte_arrays_of_a_megabyte_and_more()
    {
        var result = ExperimentRunner.Run(new Manaloc.Lab.Experiments.Buffers(), RunSettings.Smoke());
        Assert.Null(result.Error);
        // new byte[] of 4 MiB and 64 MiB: a fixed count, so that a sample allocates 64 MiB whatever the calibration's
        // first, collection-free rounds would have suggested; the pools are calibrated as before.
        foreach (int size in new[] { 4 << 20, 64 << 20 })
        {
            var allocated = Assert.Single(result.Measurements, m => m.Variant == "new byte[]" && m.Parameters.Key == $"size={size}");
            Assert.Equal((64L << 20) / size, allocated.OperationsPerSample);
        }
        // The threaded new byte[] takes a hundredth of the pools' total (at least 100).
        var threaded = result.Measurements.Where(m => m.Parameters.Contains("pattern")).ToArray();
        Assert.All(threaded.Where(m => m.Variant == "new byte[]"), m => Assert.Equal(100, m.OperationsPerSample));
        Assert.All(threaded.Where(m => m.Variant != "new byte[]"), m => Assert.Equal(4_000, m.OperationsPerSample));
        Assert.All(result.Verdict.Targets, t => Assert.NotNull(t.Today));
    }

    [Fact]
    public void Buffer_writer_measures_every_writer_raw_and_as_json_and_judges_the_targets()
    {
        var result = ExperimentRunner.Run(new BufferWriter(), RunSettings.Smoke());
        Assert.Null(result.Error);
        foreach (string variant in new[] { "ArrayBufferWriter", "ArrayPoolBufferWriter", "PooledBufferWriter", "floor: reused presized array" })
        {
            foreach (string format in new[] { "raw", "json" })
                Assert.Contains(result.Measurements, m => m.Variant == variant && m.Parameters["format"] == format);
        }
        Assert.Contains(result.Measurements, m => m.Variant == "PooledBufferWriter, alone");
        Assert.Contains(result.Verdict.Targets, t => t.Name.StartsWith("PooledBufferWriter vs ArrayBufferWriter, 64 KiB", StringComparison.Ordinal) && t.Today is not null);
        Assert.Contains(result.Verdict.Targets, t => t.Name.StartsWith("PooledBufferWriter bytes allocated", StringComparison.Ordinal) && t.Today is not null);
    }

    [Fact]
    public void Streams_measures_every_stream_raw_and_through_gzip_and_judges_the_targets()
    {
        var result = ExperimentRunner.Run(new Streams(), RunSettings.Smoke());
        Assert.Null(result.Error);
        foreach (string variant in new[] { "MemoryStream", "RecyclableMemoryStream", "PooledBufferStream" })
        {
            foreach (string format in new[] { "raw", "gzip" })
                Assert.Contains(result.Measurements, m => m.Variant == variant && m.Parameters["format"] == format);
        }
        Assert.Contains(result.Measurements, m => m.Variant == "floor: reused presized array" && m.Parameters["format"] == "raw");
        Assert.DoesNotContain(result.Measurements, m => m.Variant == "floor: reused presized array" && m.Parameters["format"] == "gzip");
        Assert.Contains(result.Verdict.Targets, t => t.Name == "PooledBufferStream vs MemoryStream, 64 KiB" && t.Today is not null);
        Assert.Contains(result.Verdict.Targets, t => t.Name == "PooledBufferStream vs MemoryStream, 1 KiB (no slower)" && t.Today is not null);
    }
}
