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
        // Slices are real stretches of time: the typical run slice is more than nothing, and no figure is negative or
        // longer than the whole smoke run took (a wrong clock or unit would break one of these bounds). A single
        // cut-short slice or gap may round to 0 ms, so only the run slices' median must be above zero.
        Assert.InRange(slices.Statistics.Median, double.Epsilon, result.ElapsedSeconds * 1000);
        Assert.All(result.Measurements, m => Assert.InRange(m.Statistics.Min, 0, result.ElapsedSeconds * 1000));
        Assert.All(result.Measurements, m => Assert.InRange(m.Statistics.Max, m.Statistics.Min, result.ElapsedSeconds * 1000));
        if (OperatingSystem.IsLinux())
        {
            Assert.Equal(1, slices.Metrics["pinned"]);
        }
        var kernel = Assert.Single(result.Tables, t => t.Title == "Kernel scheduler settings");
        Assert.NotEmpty(kernel.Rows);
    }
}
