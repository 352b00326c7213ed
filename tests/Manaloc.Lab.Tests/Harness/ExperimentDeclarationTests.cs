using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Harness;

public sealed class ExperimentDeclarationTests
{
    [Fact]
    public void The_declaring_constructor_backs_every_declared_member()
    {
        var e = new Declared("demo", ["a", "b"], "b", sweep: "size");

        Assert.Equal("demo", e.Name);
        Assert.Equal("an article", e.Article);
        Assert.Equal("a description", e.Description);
        Assert.Equal(["a", "b"], e.Variants);
        Assert.Equal("b", e.Baseline);
        Assert.Equal(3, e.QuickSeconds);
        Assert.Equal("size", e.SweepParameter);
        Assert.True(e.DeclaresQuickSeconds);
    }

    [Fact]
    public void A_baseline_that_is_not_a_variant_is_refused_with_the_experiments_name()
    {
        var error = Assert.Throws<ArgumentException>(() => new Declared("demo", ["a", "b"], "c"));
        Assert.Contains("'demo'", error.Message, StringComparison.Ordinal);
        Assert.Contains("'c'", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void No_variants_are_refused()
        => Assert.Throws<ArgumentException>(() => new Declared("demo", [], "a"));

    [Fact]
    public void An_experiment_that_neither_declares_nor_overrides_a_member_says_which()
    {
        var e = new Undeclared();
        var error = Assert.Throws<InvalidOperationException>(() => e.Variants);
        Assert.Contains(nameof(Undeclared), error.Message, StringComparison.Ordinal);
        Assert.Contains(nameof(Experiment.Variants), error.Message, StringComparison.Ordinal);
        Assert.False(e.DeclaresQuickSeconds);
    }

    private sealed class Declared(string name, string[] variants, string baseline, string? sweep = null)
        : Experiment(name, "an article", "a description", variants, baseline, quickSeconds: 3, sweepParameter: sweep)
    {
        public override void Run(ExperimentContext context)
        {
        }
    }

    private sealed class Undeclared : Experiment
    {
        public override string Name => "undeclared";

        public override void Run(ExperimentContext context)
        {
        }
    }
}
