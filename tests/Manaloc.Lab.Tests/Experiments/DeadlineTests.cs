using Manaloc.Lab.Harness;
using DeadlineExperiment = Manaloc.Lab.Experiments.Deadline;

namespace Manaloc.Lab.Tests.Experiments;

public sealed class DeadlineTests
{
    private static Measurement M(string variant, string op, double ns, double bytes) => new()
    {
        Variant = variant,
        Unit = "ns/op",
        Parameters = Parameters.Of(("op", op)),
        Statistics = Statistics.From([ns, ns, ns]),
        AllocatedBytesPerOp = bytes,
    };

    [Fact]
    public void Smoke_run_measures_poll_and_create_for_every_variant()
    {
        var experiment = new DeadlineExperiment();
        var result = ExperimentRunner.Run(experiment, RunSettings.Smoke());
        Assert.Null(result.Error);
        foreach (var variant in experiment.Variants)
        {
            Assert.Contains(result.Measurements, m => m.Variant == variant && m.Parameters["op"] == "poll");
            Assert.Contains(result.Measurements, m => m.Variant == variant && m.Parameters["op"] == "create");
        }
        var deadlinePoll = result.Measurements.Single(m => m.Variant == "Deadline" && m.Parameters["op"] == "poll");
        Assert.Equal(0, deadlinePoll.AllocatedBytesPerOp);
        var scheduledPoll = result.Measurements.Single(m => m.Variant == "ScheduledValue" && m.Parameters["op"] == "poll");
        Assert.Equal(0, scheduledPoll.AllocatedBytesPerOp);
    }

    [Theory]
    [InlineData(0, "Shrinks")]
    [InlineData(32, "Holds")]
    public void Verdict_follows_the_allocation_of_a_UtcNow_poll(double bytes, string expected)
    {
        var verdict = new DeadlineExperiment().Judge(
        [
            M("DateTime.UtcNow deadline", "poll", 30, bytes), M("Deadline", "poll", 30, 0), M("ScheduledValue", "poll", 1, 0),
            M("Deadline", "create", 30, 0), M("ScheduledValue", "create", 900, 150),
        ]);
        Assert.Equal(expected, verdict.Verdict.ToString());
        Assert.Contains("bytes allocated per DateTime.UtcNow deadline poll", verdict.Text);
        Assert.Equal(30, verdict.Targets[2].Today!.Value, 6); // ScheduledValue polls 30x cheaper than UtcNow
    }
}
