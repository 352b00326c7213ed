using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Harness;

[Collection(ProcessWideCollection.Name)]
public sealed class BenchTests
{
    private static readonly RunSettings Tiny = RunSettings.Smoke() with { Samples = 4 };

    [Fact]
    public void Takes_the_configured_samples_of_the_calibrated_count()
    {
        long calls = 0, operations = 0;
        var m = Bench.Measure("spin", n => { calls++; operations += n; for (long i = 0; i < n; i++) Thread.SpinWait(1); }, Tiny, Parameters.Of(("k", 1)));
        Assert.Equal(4, m.Statistics.Count);
        Assert.True(m.OperationsPerSample >= 1);
        Assert.True(operations >= 4 * m.OperationsPerSample);
        Assert.Equal("ns/op", m.Unit);
        Assert.True(m.NsPerOp > 0);
        Assert.Equal(1e9 / m.NsPerOp!.Value, m.OpsPerSecond!.Value, 6);
        Assert.Equal(1, m.Parameters.Int("k"));
        Assert.True(m.PeakWorkingSetBytes > 0);
    }

    [Fact]
    public void A_calibration_run_the_host_slowed_does_not_shrink_the_count_even_without_a_warm_up()
    {
        // The run that ends the doubling (64 operations of about a microsecond) loses 200 ms, as a run descheduled for a
        // few time slices would: sized from it alone, a sample of 8 ms would be 64 × 8 / 200 ≈ 3 operations. The sizing
        // rounds must bring it back to the body's own cost: at least the 64 of that run, by a wide margin.
        bool slowed = false;
        void Body(long n)
        {
            if (!slowed && n >= 64)
            {
                slowed = true;
                Thread.Sleep(200);
            }
            for (long i = 0; i < n; i++) Thread.SpinWait(20);
        }
        var settings = RunSettings.Quick() with { WarmUp = TimeSpan.Zero, SampleTarget = TimeSpan.FromMilliseconds(8) };
        long ops = Bench.Calibrate(Body, settings);
        Assert.True(slowed);
        Assert.True(ops >= 64, $"calibrated to {ops} operations per sample");
    }

    [Fact]
    public void Fixed_operation_counts_are_used_as_given()
    {
        var seen = new List<long>();
        var m = Bench.Measure("fixed", n => seen.Add(n), Tiny, fixedOperations: 1234);
        Assert.All(seen, n => Assert.Equal(1234, n));
        Assert.Equal(1234, m.OperationsPerSample);
    }

    [Fact]
    public void Allocation_per_operation_is_counted_exactly()
    {
        object? keep = null;
        // An object with two longs: 16 bytes of header and method table, 16 of fields → 32 bytes.
        var allocating = Bench.Measure("alloc", n => { for (long i = 0; i < n; i++) keep = new TwoLongs(); }, Tiny, fixedOperations: 10_000);
        Assert.Equal(32.0, allocating.AllocatedBytesPerOp!.Value, 1);
        // The runtime now and then allocates on the measuring thread for itself (tiered compilation promoting a
        // method mid-loop: one run counted 0.02 B/op, 800 bytes); a loop that allocates does so in every run, so
        // the fewest of up to five runs must be exactly 0.
        double fewest = double.MaxValue;
        for (int run = 0; run < 5 && fewest != 0; run++)
        {
            var quiet = Bench.Measure("quiet", n => { for (long i = 0; i < n; i++) Thread.SpinWait(1); }, Tiny, fixedOperations: 10_000);
            fewest = Math.Min(fewest, quiet.AllocatedBytesPerOp!.Value);
        }
        Assert.Equal(0.0, fewest);
        GC.KeepAlive(keep);
    }

    [Fact]
    public void Gc_counts_and_contention_are_captured()
    {
        var gcs = Bench.Measure("gc", n => { for (long i = 0; i < n; i++) GC.Collect(0); }, Tiny, fixedOperations: 3);
        Assert.True(gcs.Gc.Gen0 >= 3 * 4, $"gen0 = {gcs.Gc.Gen0}");

        var gate = new object();
        var m = Bench.Measure("contended", n =>
        {
            for (long i = 0; i < n; i++)
            {
                using var holding = new ManualResetEventSlim();
                var t = new Thread(() => { lock (gate) { holding.Set(); Thread.Sleep(20); } });
                t.Start();
                holding.Wait();
                lock (gate) { }
                t.Join();
            }
        }, Tiny, fixedOperations: 1);
        Assert.True(m.LockContentions >= 4, $"contentions = {m.LockContentions}");
    }

    [Fact]
    public void A_descheduled_warm_up_round_does_not_shrink_the_samples()
    {
        // Each operation busy-waits 100 ns. The first full-size warm-up round also sleeps 60 ms, as
        // if the thread had been descheduled; it ends the 40 ms warm-up. Calibrating from that last
        // round would cut the count about sevenfold; the fastest round keeps it.
        var settings = RunSettings.Smoke() with { WarmUp = TimeSpan.FromMilliseconds(40), SampleTarget = TimeSpan.FromMilliseconds(10), Samples = 2 };
        int fullSizeCalls = 0;
        long slowRound = 0;
        var m = Bench.Measure("descheduled", n =>
        {
            long end = System.Diagnostics.Stopwatch.GetTimestamp() + (long)(n * 100e-9 * System.Diagnostics.Stopwatch.Frequency);
            while (System.Diagnostics.Stopwatch.GetTimestamp() < end) { }
            if (n * 100 >= 10_000_000 / 8 && ++fullSizeCalls == 2)
            {
                slowRound = n;
                Thread.Sleep(60);
            }
        }, settings);
        Assert.True(slowRound > 0);
        Assert.True(m.OperationsPerSample >= slowRound / 2, $"calibrated to {m.OperationsPerSample} operations after a slow round of {slowRound}");
    }

    [Fact]
    public void Compare_samples_cells_of_different_parameters_in_one_interleaved_run()
    {
        var context = new ExperimentContext("demo", RunSettings.Smoke() with { Samples = 4 });
        var order = new List<string>();
        Action<long> Body(string name) => n => { order.Add(name); for (long i = 0; i < n; i++) Thread.SpinWait(1); };

        var measured = context.Compare(
        [
            ("a", Parameters.Of(("op", "x")), Body("a/x")),
            ("b", Parameters.Of(("op", "x")), Body("b/x")),
            ("a", Parameters.Of(("op", "y")), Body("a/y")),
        ]);

        Assert.Equal([("a", "op=x"), ("b", "op=x"), ("a", "op=y")], measured.Select(m => (m.Variant, m.ParameterKey)));
        Assert.All(measured, m => Assert.Equal(4, m.Statistics.Count));
        Assert.Equal(measured, context.Measurements);
        // Interleaved: the last 12 calls are the samples, one of every cell per round.
        var sampling = order.TakeLast(12).ToArray();
        for (int round = 0; round < 4; round++) Assert.Equal(3, sampling.Skip(3 * round).Take(3).Distinct().Count());
    }

    [Fact]
    public void Compare_keeps_a_cells_own_operation_count_and_calibrates_the_others()
    {
        var context = new ExperimentContext("demo", RunSettings.Smoke() with { Samples = 3 });
        var fixedCounts = new List<long>();
        var order = new List<string>();
        Action<long> Spin(string name, List<long>? counts = null) => n => { order.Add(name); counts?.Add(n); for (long i = 0; i < n; i++) Thread.SpinWait(1); };

        var measured = context.Compare(
        [
            ("piloted", Parameters.None, Spin("piloted", fixedCounts), 37L),
            ("calibrated", Parameters.None, Spin("calibrated"), null),
        ]);

        Assert.Equal(37, measured[0].OperationsPerSample);
        Assert.All(fixedCounts, n => Assert.Equal(37, n)); // warm-up and samples alike: never calibrated
        Assert.True(fixedCounts.Count >= 4, $"{fixedCounts.Count} calls: at least one warm-up run and three samples");
        Assert.All(measured, m => Assert.Equal(3, m.Statistics.Count));
        var sampling = order.TakeLast(6).ToArray();
        for (int round = 0; round < 3; round++) Assert.Equal(2, sampling.Skip(2 * round).Take(2).Distinct().Count());
        Assert.Throws<ArgumentOutOfRangeException>(() => context.Compare([("none", Parameters.None, Spin("none"), 0L)]));
    }

    [Fact]
    public void Compare_takes_as_many_interleaved_rounds_as_asked_and_refuses_none()
    {
        var context = new ExperimentContext("demo", RunSettings.Smoke() with { Samples = 2 });
        var order = new List<string>();
        Action<long> Body(string name) => n => { order.Add(name); for (long i = 0; i < n; i++) Thread.SpinWait(1); };

        var measured = context.Compare([("a", Parameters.None, Body("a")), ("b", Parameters.None, Body("b"))], rounds: 6);

        Assert.All(measured, m => Assert.Equal(6, m.Statistics.Count));
        var sampling = order.TakeLast(12).ToArray();
        for (int round = 0; round < 6; round++) Assert.Equal(2, sampling.Skip(2 * round).Take(2).Distinct().Count());
        Assert.Throws<ArgumentOutOfRangeException>(() => context.Compare([("a", Parameters.None, Body("a"))], rounds: 0));
    }

    private sealed class TwoLongs
    {
        public long A = 1;
        public long B = 2;
    }
}
