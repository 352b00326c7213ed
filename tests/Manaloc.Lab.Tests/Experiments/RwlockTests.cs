using Manaloc.Lab.Experiments;
using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Experiments;

public sealed class RwlockTests
{
    [Fact]
    public void Quick_grid_is_small_and_full_grid_is_the_articles()
    {
        var rw = new Rwlock();
        var quick = rw.DescribeParameters(RunSettings.Quick([1, 2, 4]));
        var full = rw.DescribeParameters(RunSettings.Full([1, 2, 4]));

        Assert.Equal(["0", "2", "50"], quick.Single(p => p.Name == "writers").Values);
        Assert.Equal(["1", "50"], quick.Single(p => p.Name == "hold").Values);
        Assert.True(full.Single(p => p.Name == "writers").Values.Count >= 6);
    }

    [Fact]
    public void Smoke_run_covers_the_grid_for_every_lock()
    {
        var result = ExperimentRunner.Run(new Rwlock(), RunSettings.Smoke());

        Assert.Null(result.Error);
        var cells = result.Measurements.GroupBy(m => m.ParameterKey).ToList();
        Assert.Equal(2 * 1 * 2, cells.Count); // writers {0, 50} × hold {1} × threads {1, 2}
        Assert.All(cells, c => Assert.Equal(4, c.Count()));
        // One sample per round, merged: each measurement holds every round's sample and its operations.
        Assert.All(result.Measurements, m => Assert.Equal(RunSettings.Smoke().Samples, m.Statistics.Count));
        Assert.All(result.Measurements, m => Assert.True(m.NsPerOp > 0 && m.OperationsPerSample > 0));
    }

    [Fact]
    public void Judge_states_both_targets()
    {
        static Measurement M(string variant, int writers, double ns) => new()
        {
            Variant = variant, Parameters = Parameters.Of(("writers", writers), ("hold", 1), ("threads", 2)), Unit = "ns/op", Statistics = Statistics.From([ns, ns, ns]),
        };
        var verdict = new Rwlock().Judge(
        [
            M("lock", 0, 30), M("ReaderWriterLockSlim", 0, 40), M("SlimReaderWriterLock", 0, 20),
            M("lock", 50, 30), M("ReaderWriterLockSlim", 50, 60), M("SlimReaderWriterLock", 50, 40),
        ]);

        Assert.Equal(Verdict.Holds, verdict.Verdict);
        Assert.Equal(2, verdict.Targets[0].Today!.Value, 6);
        Assert.True(verdict.Targets[0].Met);
        Assert.Equal(0.75, verdict.Targets[1].Today!.Value, 6);
        Assert.False(verdict.Targets[1].Met);
    }

    [Fact]
    public void Judge_takes_the_geometric_mean_over_thread_counts()
    {
        static Measurement M(string variant, int writers, int threads, double ns) => new()
        {
            Variant = variant, Parameters = Parameters.Of(("writers", writers), ("hold", 1), ("threads", threads)), Unit = "ns/op", Statistics = Statistics.From([ns, ns, ns]),
        };
        var verdict = new Rwlock().Judge(
        [
            M("lock", 0, 1, 10), M("ReaderWriterLockSlim", 0, 1, 40), M("SlimReaderWriterLock", 0, 1, 10),
            M("lock", 0, 2, 10), M("ReaderWriterLockSlim", 0, 2, 10), M("SlimReaderWriterLock", 0, 2, 10),
            M("lock", 50, 1, 20), M("ReaderWriterLockSlim", 50, 1, 60), M("SlimReaderWriterLock", 50, 1, 10),
            M("lock", 50, 2, 20), M("ReaderWriterLockSlim", 50, 2, 60), M("SlimReaderWriterLock", 50, 2, 40),
        ]);

        // 0% writers: 4x at one thread, 1x at two: geometric mean 2x.
        Assert.Equal(2, verdict.Targets[0].Today!.Value, 6);
        Assert.Equal(1, verdict.Targets[1].Today!.Value, 6); // 2x at one thread, 0.5x at two
        Assert.All(verdict.Targets, t => Assert.True(t.Met, t.ToString()));
    }
}
