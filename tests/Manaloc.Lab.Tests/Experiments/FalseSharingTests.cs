using Manaloc.Lab.Experiments;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Experiments;

public sealed class FalseSharingTests
{
    private static Measurement M(string variant, int threads, double ns) => new()
    {
        Variant = variant,
        Unit = "ns/op",
        Threads = threads,
        Parameters = Parameters.Of(("threads", threads)),
        Statistics = Statistics.From([ns, ns, ns]),
    };

    [Fact]
    public void Smoke_run_sweeps_threads_for_every_variant()
    {
        var experiment = new FalseSharing();
        var result = ExperimentRunner.Run(experiment, RunSettings.Smoke());
        Assert.Null(result.Error);
        Assert.Equal("threads", result.SweepParameter);
        foreach (var variant in experiment.Variants)
        {
            Assert.Contains(result.Measurements, m => m.Variant == variant && m.Threads == 1);
            Assert.Contains(result.Measurements, m => m.Variant == variant && m.Threads == 2);
        }
    }

    [Fact]
    public void Verdict_compares_packed_and_padded_at_two_or_more_threads()
    {
        var verdict = new FalseSharing().Judge(
        [
            M("packed long[]", 1, 1), M("Padded<long>[]", 1, 1),
            M("packed long[]", 2, 6), M("Padded<long>[]", 2, 1),
            M("StripedCounter", 2, 2), M("shared Interlocked", 2, 20),
        ]);
        Assert.Equal(Verdict.Holds, verdict.Verdict);
        Assert.Equal(6, verdict.TodayValue!.Value, 6);
        Assert.Contains("padded vs packed", verdict.Text);
        Assert.Equal(10, verdict.Targets[0].Today!.Value, 6); // StripedCounter vs shared Interlocked at 2 threads
    }

    [Fact]
    public void No_multi_thread_measurement_is_not_comparable()
        => Assert.Equal(Verdict.NotComparable, new FalseSharing().Judge([M("packed long[]", 1, 1), M("Padded<long>[]", 1, 1)]).Verdict);
}
