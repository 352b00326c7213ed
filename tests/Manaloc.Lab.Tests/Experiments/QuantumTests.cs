using Manaloc.Lab.Experiments;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Experiments;

public sealed class QuantumTests
{
    [Fact]
    public void The_smoke_run_pins_two_threads_and_reports_slices_and_kernel_settings()
    {
        var result = ExperimentRunner.Run(new Quantum(), RunSettings.Smoke());

        Assert.Null(result.Error);
        var slices = Assert.Single(result.Measurements, m => m.Variant == "run slice");
        Assert.Equal("ms", slices.Unit);
        // A slice, a cut-short slice or a gap off the processor is a real stretch of time: more than nothing, and
        // less than the whole smoke run took (a wrong clock or unit would break either bound).
        Assert.All(result.Measurements, m => Assert.InRange(m.Statistics.Min, double.Epsilon, result.ElapsedSeconds * 1000));
        Assert.All(result.Measurements, m => Assert.InRange(m.Statistics.Max, m.Statistics.Min, result.ElapsedSeconds * 1000));
        if (OperatingSystem.IsLinux())
        {
            Assert.Equal(1, slices.Metrics["pinned"]);
        }
        var kernel = Assert.Single(result.Tables, t => t.Title == "Kernel scheduler settings");
        Assert.NotEmpty(kernel.Rows);
    }
}
