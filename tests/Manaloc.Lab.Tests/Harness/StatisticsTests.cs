using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Harness;

public sealed class StatisticsTests
{
    [Fact]
    public void Odd_count_median_is_the_middle_sample()
    {
        var s = Statistics.From([5.0, 1.0, 3.0]);
        Assert.Equal(3, s.Count);
        Assert.Equal(3.0, s.Median);
        Assert.Equal(1.0, s.Min);
        Assert.Equal(5.0, s.Max);
        Assert.Equal(3.0, s.Mean);
        Assert.Equal(2.0, s.StdDev, 12);
    }

    [Fact]
    public void Even_count_median_is_the_mean_of_the_middle_two()
    {
        var s = Statistics.From([4.0, 1.0, 2.0, 10.0]);
        Assert.Equal(3.0, s.Median);
        Assert.Equal(4.25, s.Mean);
    }

    [Fact]
    public void Single_sample_has_zero_deviation()
    {
        var s = Statistics.From([7.0]);
        Assert.Equal(7.0, s.Median);
        Assert.Equal(0.0, s.StdDev);
        Assert.True(double.IsNaN(s.P99)); // no p99 from one sample
    }

    [Fact]
    public void Percentiles_need_enough_samples_to_differ_from_the_maximum()
    {
        var nine = Statistics.From(Enumerable.Range(1, 9).Select(i => (double)i).ToArray());
        Assert.True(double.IsNaN(nine.P90) && double.IsNaN(nine.P10) && double.IsNaN(nine.P99));
        var ninetyNine = Statistics.From(Enumerable.Range(1, 99).Select(i => (double)i).ToArray());
        Assert.Equal(90.0, ninetyNine.P90);
        Assert.Equal(10.0, ninetyNine.P10);
        Assert.True(double.IsNaN(ninetyNine.P99));
        Assert.Equal(Enumerable.Range(1, 99).Select(i => (double)i), ninetyNine.Samples);
    }

    [Fact]
    public void Percentiles_use_nearest_rank()
    {
        var samples = Enumerable.Range(1, 100).Select(i => (double)i).Reverse().ToArray();
        var s = Statistics.From(samples);
        Assert.Equal(90.0, s.P90);
        Assert.Equal(99.0, s.P99);
        Assert.Equal(50.5, s.Median);
        Assert.Equal(1.0, Statistics.Percentile([1.0, 2.0], 0));
        Assert.Equal(2.0, Statistics.Percentile([1.0, 2.0], 1));
    }

    [Fact]
    public void Bad_samples_are_rejected()
    {
        Assert.Throws<ArgumentException>(() => Statistics.From(Array.Empty<double>()));
        Assert.Throws<ArgumentException>(() => Statistics.From([1.0, double.NaN]));
        Assert.Throws<ArgumentOutOfRangeException>(() => Statistics.Percentile([1.0], 1.5));
    }
}
