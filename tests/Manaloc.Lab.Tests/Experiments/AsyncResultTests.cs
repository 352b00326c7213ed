using Manaloc.Lab.Experiments;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Experiments;

public sealed class AsyncResultTests
{
    [Fact]
    public void Smoke_run_measures_every_variant_per_size_and_the_value_task_source_allocates_nothing()
    {
        var result = ExperimentRunner.Run(new AsyncResult(), RunSettings.Smoke());

        Assert.Null(result.Error);
        foreach (var size in result.Measurements.GroupBy(m => m.Parameters["size"]))
        {
            Assert.Equal(new AsyncResult().Variants.ToHashSet(), size.Select(m => m.Variant).ToHashSet());
        }
        Assert.All(result.Measurements.Where(m => m.Variant == "ReusableValueTaskSource"), m => Assert.True(m.AllocatedBytesPerOp < 1, $"{m.AllocatedBytesPerOp} B/op"));
        Assert.All(result.Measurements.Where(m => m.Variant == "LazyAsyncResult"), m => Assert.True(m.AllocatedBytesPerOp < result.Measurements.First(e => e.Variant == "eager handle" && e.ParameterKey == m.ParameterKey).AllocatedBytesPerOp));
    }

    [Fact]
    public void Judge_compares_size_1_and_states_the_goal()
    {
        static Measurement M(string variant, int size, double ns, double? ratio = null) => new()
        {
            Variant = variant, Parameters = Parameters.Of(("size", size)), Unit = "ns/op", Statistics = Statistics.From([ns, ns, ns]), RatioToBaseline = ratio,
        };
        var verdict = new AsyncResult().Judge([M("eager handle", 1, 1500), M("LazyAsyncResult", 1, 500), M("eager handle", 15, 4000), M("LazyAsyncResult", 15, 3800, 0.95)]);

        Assert.Equal(Verdict.Holds, verdict.Verdict);
        Assert.Equal(3, verdict.TodayValue!.Value, 3);
        var target = Assert.Single(verdict.Targets);
        Assert.Equal(3, target.Today!.Value, 3);
        Assert.True(target.Met);
        Assert.Contains("size 1", verdict.Text, StringComparison.Ordinal); // size 15 (1.05x) is not what is judged
    }
}
