using Manaloc.Lab.Experiments;
using Manaloc.Lab.Harness;
using Manaloc.Lab.Reporting;

namespace Manaloc.Lab.Tests.Reporting;

public sealed class RunEstimateTests
{
    // A run shaped like the lab's: short and long experiments mixed.
    private static readonly double[] Declared = [10, 20, 60, 25, 5, 15, 10, 30, 90, 10];

    [Fact]
    public void Before_anything_ran_the_estimate_is_the_declared_total()
        => Assert.Equal(Declared.Sum(), RunEstimate.RemainingSeconds(Declared, []), 9);

    [Fact]
    public void When_every_experiment_takes_what_it_declared_the_estimate_is_exact_at_every_step()
    {
        for (int done = 0; done <= Declared.Length; done++)
        {
            double left = Declared.Skip(done).Sum();
            Assert.Equal(left, RunEstimate.RemainingSeconds(Declared, Declared[..done]), 9);
            Assert.Equal(1, RunEstimate.Pace(Declared, Declared[..done]), 9);
        }
    }

    [Theory]
    [InlineData(3.0)]
    [InlineData(0.4)]
    public void On_a_machine_slower_or_faster_than_declared_the_estimate_follows_without_jumping(double factor)
    {
        var actual = Declared.Select(d => d * factor).ToArray();
        double? previousTotal = null;
        for (int done = 0; done < Declared.Length; done++)
        {
            // Sampled every second of the running experiment too, not only between experiments.
            for (double t = 0; t <= actual[done]; t += 1)
            {
                double elapsed = actual[..done].Sum() + t;
                double total = elapsed + RunEstimate.RemainingSeconds(Declared, actual[..done], t);
                if (previousTotal is { } p)
                {
                    Assert.InRange(total / p, 1 / 1.35, 1.35); // one step never moves the finish time by more than 35%
                }
                previousTotal = total;
            }
        }
        // Near the end the pace has learned the machine: the estimate of the last experiment is within 25% of the truth.
        double lastLeft = RunEstimate.RemainingSeconds(Declared, actual[..^1]);
        Assert.InRange(lastLeft / actual[^1], 0.75, 1.25);
    }

    [Fact]
    public void A_short_experiment_after_a_long_one_does_not_swing_the_estimate_as_an_average_would()
    {
        double[] declared = [90, 2, 2, 2, 60];
        double[] actual = [90, 2];
        double ours = RunEstimate.RemainingSeconds(declared, actual);
        double average = actual.Average() * (declared.Length - actual.Length); // the old estimate: 46 s a piece
        Assert.Equal(64, ours, 9);
        Assert.Equal(138, average, 9);
    }

    [Fact]
    public void An_overrunning_experiment_is_never_done_and_raises_the_pace()
    {
        double[] declared = [10, 10, 10];
        double before = RunEstimate.RemainingSeconds(declared, [10], 10);
        double overrun = RunEstimate.RemainingSeconds(declared, [10], 40);
        Assert.True(overrun > 0);
        Assert.True(RunEstimate.Pace(declared, [10], 40) > 1);
        Assert.True(overrun > 10, $"{overrun}: the last experiment should be scaled up by the overrun");
        Assert.True(before > 0);
    }

    [Fact]
    public void The_pace_is_bounded_either_way()
    {
        Assert.Equal(RunEstimate.MaxPace, RunEstimate.Pace([1, 1], [10_000]));
        Assert.Equal(1 / RunEstimate.MaxPace, RunEstimate.Pace([10_000, 1], [0]));
    }

    [Fact]
    public void Bad_input_is_refused()
    {
        Assert.Throws<ArgumentException>(() => RunEstimate.RemainingSeconds([1], [1, 2]));
        Assert.Throws<ArgumentOutOfRangeException>(() => RunEstimate.RemainingSeconds([double.NaN], []));
        Assert.Throws<ArgumentOutOfRangeException>(() => RunEstimate.RemainingSeconds([1], [], -1));
    }

    [Fact]
    public void Every_experiment_declares_a_positive_cost_in_every_mode()
    {
        foreach (var e in ExperimentRegistry.All())
        {
            foreach (var settings in new[] { RunSettings.Smoke(), RunSettings.Quick(), RunSettings.Full() })
            {
                Assert.True(e.ExpectedSeconds(settings) > 0, $"{e.Name} declares no cost in {settings.Mode} mode");
            }
            // Declared from a quick run, not left at the default.
            Assert.True(e.DeclaresQuickSeconds, $"{e.Name} does not declare its QuickSeconds");
        }
    }
}
