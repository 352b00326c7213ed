using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Harness;

/// <summary>
/// An experiment written against the older shape (Figure and Judge overridden, units as strings,
/// hand-built TargetResults) still compiles and runs, so experiments written before the declared
/// shape keep working until they are migrated (docs/lab.md, "From the older shape").
/// </summary>
public sealed class LegacyShapeTests
{
    [Fact]
    public void An_older_shape_experiment_still_compiles_runs_and_is_judged_by_the_one_rule()
    {
        var result = ExperimentRunner.Run(new OldShape(), RunSettings.Smoke());

        Assert.Null(result.Error);
        Assert.Equal(Verdict.Holds, result.Verdict.Verdict); // 10x against an article's 4x: at least half
        Assert.Equal(10, result.Verdict.TodayValue!.Value, 6);
        Assert.Equal("ms", result.Measurements[0].Unit.Symbol);
        Assert.True(Assert.Single(result.Verdict.Targets).Met);
        Assert.Equal("article: 4x", result.ArticleFigure!.Text);
    }

    private sealed class OldShape : Experiment
    {
        public override string Name => "old-shape";
        public override string Article => "none";
        public override string Description => "the older experiment shape";
        public override ArticleFigure Figure => new("article: 4x", 4, "x");
        public override IReadOnlyList<string> Variants => ["slow", "fast"];
        public override string Baseline => "slow";

        public override void Run(ExperimentContext context)
        {
            int n = context.IsQuick ? 12 : 100;
            context.RecordSamples("slow", "ms", Enumerable.Repeat(10.0, n).ToArray());
            context.RecordSamples("fast", "ms", Enumerable.Repeat(1.0, n).ToArray());
        }

        public override VerdictResult Judge(IReadOnlyList<Measurement> measurements)
        {
            var verdict = JudgeRatio(measurements, "slow", "fast");
            var slow = measurements.First(m => m.Variant == "slow");
            double p99 = slow.Statistics.P99; // a double still: NaN below 100 samples
            string text = $"{verdict.Text} (slow {Format.Value(slow.Statistics.Median, "ms")}, p99 {Format.Significant(p99)})";
            return verdict with { Text = text, Targets = [TargetResult.AtMost("fast time", measurements.First(m => m.Variant == "fast").Statistics.Median, 2, "ms")] };
        }
    }
}
