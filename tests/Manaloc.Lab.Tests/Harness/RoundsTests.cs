using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Harness;

public sealed class RoundsTests
{
    [Theory]
    [InlineData(4)]
    [InlineData(6)]
    public void Balanced_order_puts_every_variant_in_every_position_and_after_every_other_once(int n)
    {
        var positions = new HashSet<(int Variant, int Position)>();
        var pairs = new HashSet<(int Before, int After)>();
        for (int round = 0; round < n; round++)
        {
            var order = Enumerable.Range(0, n).Select(k => Rounds.BalancedOrder(n, round, k)).ToArray();
            Assert.Equal(Enumerable.Range(0, n), order.Order()); // a permutation
            for (int k = 0; k < n; k++) positions.Add((order[k], k));
            for (int k = 1; k < n; k++) Assert.True(pairs.Add((order[k - 1], order[k])), $"pair {order[k - 1]}→{order[k]} twice");
        }
        Assert.Equal(n * n, positions.Count);
        Assert.Equal(n * (n - 1), pairs.Count);
    }

    [Fact]
    public void Balanced_order_rejects_a_position_outside_the_variants()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => Rounds.BalancedOrder(4, 0, 4));
        Assert.Throws<ArgumentOutOfRangeException>(() => Rounds.BalancedOrder(0, 0, 0));
        Assert.Throws<ArgumentOutOfRangeException>(() => Rounds.BalancedOrder(4, -1, 0));
    }

    [Fact]
    public void Merge_keeps_every_round_sample_and_sums_the_costs()
    {
        static Measurement Round(double ns, long ops, long bytes, int gen0, long peak) => new()
        {
            Variant = "v",
            Unit = "ns/op",
            Statistics = Statistics.From([ns]),
            OperationsPerSample = ops,
            NsPerOp = ns,
            AllocatedBytes = bytes,
            Gc = new GcCounts { Gen0 = gen0 },
            LockContentions = 1,
            PeakWorkingSetBytes = peak,
        };

        var merged = Rounds.Merge([Round(30, 100, 0, 1, 10), Round(10, 100, 400, 0, 30), Round(20, 200, 0, 2, 20)]);

        Assert.Equal(3, merged.Statistics.Count);
        Assert.Equal(20, merged.Statistics.Median);
        Assert.Equal(10, merged.Statistics.Min);
        Assert.Equal(30, merged.Statistics.Max);
        Assert.Equal(20, merged.NsPerOp);
        Assert.Equal(1e9 / 20, merged.OpsPerSecond);
        Assert.Equal(400, merged.AllocatedBytes);
        Assert.Equal(1.0, merged.AllocatedBytesPerOp); // 400 B over 400 operations
        Assert.Equal(3, merged.Gc.Gen0);
        Assert.Equal(3, merged.LockContentions);
        Assert.Equal(30, merged.PeakWorkingSetBytes);
    }

    [Fact]
    public void Merge_rejects_rounds_of_several_samples_and_no_rounds()
    {
        var two = new Measurement { Variant = "v", Unit = "ns/op", Statistics = Statistics.From([1.0, 2.0]) };
        Assert.Contains("exactly one sample", Assert.Throws<ArgumentException>(() => Rounds.Merge([two])).Message, StringComparison.Ordinal);
        Assert.Throws<ArgumentException>(() => Rounds.Merge([]));
    }

    [Fact]
    public void Interleave_takes_one_sample_per_variant_per_round_in_balanced_order_and_merges_them()
    {
        var calls = new List<(int Variant, int Round)>();
        var merged = Rounds.Interleave(4, 4, CancellationToken.None, (v, round) =>
        {
            calls.Add((v, round));
            return new Measurement { Variant = $"v{v}", Unit = "ns/op", Statistics = Statistics.From([10.0 * v + round]) };
        });

        Assert.Equal(16, calls.Count);
        for (int round = 0; round < 4; round++)
        {
            var order = calls.Where(c => c.Round == round).Select(c => c.Variant);
            Assert.Equal(Enumerable.Range(0, 4).Select(k => Rounds.BalancedOrder(4, round, k)), order);
        }
        Assert.Equal(["v0", "v1", "v2", "v3"], merged.Select(m => m.Variant));
        Assert.All(merged, m => Assert.Equal(4, m.Statistics.Count));
        Assert.Equal(31.5, merged[3].Statistics.Median); // samples 30, 31, 32, 33
    }

    [Fact]
    public void Interleave_stops_when_cancelled_and_rejects_no_variants_or_rounds()
    {
        using var cts = new CancellationTokenSource();
        int calls = 0;
        Assert.Throws<OperationCanceledException>(() => Rounds.Interleave(4, 4, cts.Token, (v, _) =>
        {
            if (++calls == 3) cts.Cancel();
            return new Measurement { Variant = "v", Unit = "ns/op", Statistics = Statistics.From([1.0]) };
        }));
        Assert.Equal(3, calls);
        Assert.Throws<ArgumentOutOfRangeException>(() => Rounds.Interleave(0, 4, CancellationToken.None, (_, _) => null!));
        Assert.Throws<ArgumentOutOfRangeException>(() => Rounds.Interleave(4, 0, CancellationToken.None, (_, _) => null!));
    }

    [Theory]
    [InlineData(0.25)]
    [InlineData(1.0)]
    [InlineData(2.0)]
    public void Sample_cells_run_the_untimed_share_of_the_count_before_every_sample(double share)
    {
        var oneCalls = new List<long>();
        var twoCalls = new List<(int Thread, long Count)>();
        var cells = new[]
        {
            new Rounds.Cell("one", Parameters.None, 1, (_, n) => oneCalls.Add(n)),
            new Rounds.Cell("two", Parameters.None, 2, (t, n) => { lock (twoCalls) twoCalls.Add((t, n)); }),
        };
        var settings = RunSettings.Smoke() with { SampleTarget = TimeSpan.FromMilliseconds(1), WarmUp = TimeSpan.Zero, Samples = 1 };
        var context = new ExperimentContext("test", settings);
        var measured = Rounds.SampleCells(context, cells, settings, rounds: 2, pilot: TimeSpan.Zero, untimedShare: share);

        Assert.Equal(2, measured.Length);
        Assert.All(measured, m => Assert.Equal(2, m.Statistics.Count));
        // The 1-thread cell: each sample of its count directly after an untimed run of the share of it.
        long one = measured[0].OperationsPerSample, untimedOne = Math.Max(1, (long)(one * share));
        Assert.True(EndsWith(oneCalls, [untimedOne, one, untimedOne, one]), $"1-thread calls {string.Join(", ", oneCalls)}: expected {untimedOne} untimed before each {one}");
        // The 2-thread cell: each of its threads runs the share of the count untimed, then the count.
        long two = measured[1].OperationsPerSample / 2, untimedTwo = Math.Max(1, (long)(two * share));
        foreach (int thread in new[] { 0, 1 })
        {
            var calls = twoCalls.Where(c => c.Thread == thread).Select(c => c.Count).ToList();
            Assert.True(EndsWith(calls, [untimedTwo, two, untimedTwo, two]), $"thread {thread}'s calls {string.Join(", ", calls)}: expected {untimedTwo} untimed before each {two}");
        }
        Assert.Throws<ArgumentOutOfRangeException>(() => Rounds.SampleCells(context, cells, settings, 2, TimeSpan.Zero, untimedShare: -0.5));
        Assert.Throws<ArgumentOutOfRangeException>(() => Rounds.SampleCells(context, cells, settings, 2, TimeSpan.Zero, untimedShare: double.NaN));
    }

    /// <summary>Whether <paramref name="expected"/> is the tail of <paramref name="calls"/> (the rounds follow the calibration's calls).</summary>
    private static bool EndsWith(List<long> calls, long[] expected)
        => calls.Count >= expected.Length && calls.Skip(calls.Count - expected.Length).SequenceEqual(expected);
}
