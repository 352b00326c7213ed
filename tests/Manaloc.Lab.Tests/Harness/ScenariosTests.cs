using Manaloc.Lab.Harness;

namespace Manaloc.Lab.Tests.Harness;

/// <summary>The harness's primitives for what experiments used to do themselves: scenario rounds, the JIT warm-up, spin sizing, CPU clocks.</summary>
public sealed class ScenariosTests
{
    private static ExperimentContext Context(RunMode mode = RunMode.Smoke) => new("test", RunSettings.For(mode));

    [Fact]
    public void Scenarios_warm_every_variant_up_once_then_run_balanced_rounds()
    {
        var calls = new List<(string Variant, int Size)>();
        string[] names = ["a", "b", "c", "d"];
        var runs = Scenarios.Run(Context(), [.. names.Select(n => (n, (Func<int, string>)(size => { calls.Add((n, size)); return $"{n}:{size}"; })))],
            size: 100, warmUpSize: 7, rounds: 4);

        Assert.Equal(names.Select(n => (n, 7)), calls.Take(4)); // the warm-ups, in declaration order, at their own size
        var measured = calls.Skip(4).ToArray();
        Assert.Equal(16, measured.Length);
        Assert.All(measured, c => Assert.Equal(100, c.Size));
        // Every round runs every variant once; over four rounds every variant takes every position once (balanced).
        for (int round = 0; round < 4; round++) Assert.Equal(names.Order(), measured.Skip(4 * round).Take(4).Select(c => c.Variant).Order());
        for (int position = 0; position < 4; position++) Assert.Equal(names.Order(), Enumerable.Range(0, 4).Select(r => measured[4 * r + position].Variant).Order());
        // Each variant's runs come back under its name, in round order, with what the run returned and the harness's accounts.
        Assert.Equal(names, runs.Keys);
        Assert.All(runs, kv =>
        {
            Assert.Equal(4, kv.Value.Count);
            Assert.All(kv.Value, r => Assert.Equal($"{kv.Key}:100", r.Result));
            Assert.All(kv.Value, r => Assert.True(r.Wall >= TimeSpan.Zero && r.Cpu >= TimeSpan.Zero && r.AllocatedBytes >= 0));
        });
    }

    [Fact]
    public void Scenarios_count_what_a_run_allocates_and_stop_when_cancelled()
    {
        var runs = Scenarios.Run(Context(), [("alloc", (Func<int, int>)(n => { for (int i = 0; i < n; i++) GC.KeepAlive(new byte[1000]); return n; }))], size: 1000, warmUpSize: 1, rounds: 2);
        Assert.All(runs["alloc"], r => Assert.True(r.AllocatedBytes >= 1000 * 1000, $"{r.AllocatedBytes} B counted for 1 MB allocated"));

        using var cancel = new CancellationTokenSource();
        cancel.Cancel();
        var cancelled = new ExperimentContext("test", RunSettings.Smoke(), cancellation: cancel.Token);
        Assert.Throws<OperationCanceledException>(() => Scenarios.Run(cancelled, [("x", (Func<int, int>)(n => n))], 1, 1, 1));
    }

    [Fact]
    public void Tier_up_calls_every_body_per_round_and_runs_the_after_round_step()
    {
        int a = 0, b = 0, after = 0;
        TierUp.Run(Context(), [() => a++, () => b++], rounds: 3, calls: 5, afterRound: () => after++);
        Assert.Equal((15, 15, 3), (a, b, after));
        Assert.Throws<ArgumentOutOfRangeException>(() => TierUp.Run(Context(), [() => { }], rounds: 0));
    }

    [Fact]
    public void Tier_up_until_nothing_compiles_goes_on_while_a_round_compiles_and_stops_at_its_bound()
    {
        // Smoke mode takes the rounds asked for: its figures mean nothing, and it never waits.
        int calls = 0;
        Assert.Equal(2, TierUp.Run(Context(), [() => calls++], rounds: 2, calls: 3, untilNothingCompiles: true));
        Assert.Equal(6, calls);

        // A round that compiles a new method every time never settles: the warm-up stops at its bound.
        int rounds = 0;
        int taken = TierUp.Run(Context(RunMode.Quick), [() => { }], rounds: 1, calls: 1, afterRound: () =>
        {
            rounds++;
            CompileANewMethod();
        }, untilNothingCompiles: true);
        Assert.Equal(TierUp.MaxRounds, taken);
        Assert.Equal(TierUp.MaxRounds, rounds);

        // Without the option the rounds asked for are all there is.
        Assert.Equal(1, TierUp.Run(Context(RunMode.Quick), [() => { }], rounds: 1, calls: 1, afterRound: CompileANewMethod));
    }

    /// <summary>Compiles and runs a method no one compiled before (a dynamic method is jitted on its first call).</summary>
    private static void CompileANewMethod()
    {
        var method = new System.Reflection.Emit.DynamicMethod("fresh", typeof(int), Type.EmptyTypes);
        var il = method.GetILGenerator();
        il.Emit(System.Reflection.Emit.OpCodes.Ldc_I4, 42);
        il.Emit(System.Reflection.Emit.OpCodes.Ret);
        Assert.Equal(42, ((Func<int>)method.CreateDelegate(typeof(Func<int>)))());
    }

    [Fact]
    public void Spins_are_sized_within_the_bounds_and_report_their_measured_cost()
    {
        var (spins, micros) = Pilot.Spins(s => Thread.SpinWait(s), TimeSpan.FromMicroseconds(1), startSpins: 30, probeCalls: 2_000);
        Assert.InRange(spins, 1, 1_000_000);
        Assert.True(micros > 0 && double.IsFinite(micros));
        Assert.Throws<ArgumentOutOfRangeException>(() => Pilot.Spins(_ => { }, TimeSpan.Zero));
    }

    [Fact]
    public void Process_cpu_counts_the_time_a_thread_spent_on_a_core()
    {
        var cpu = ProcessCpu.StartNow();
        long x = 0;
        for (int i = 0; i < 50_000_000; i++) x += i ^ (x >> 3);
        GC.KeepAlive(x);
        Assert.True(cpu.Elapsed > TimeSpan.Zero);
        Assert.True(cpu.Cores > 0);
    }

    [LinuxFact]
    public void A_thread_sweep_accounts_its_threads_cpu_when_asked()
    {
        var settings = RunSettings.Smoke() with { Samples = 2 };
        var with = ThreadSweep.Measure("spin", 2, (_, n) => { for (long i = 0; i < n; i++) Thread.SpinWait(20); }, settings, totalOperations: 20_000, threadCpu: true);
        var without = ThreadSweep.Measure("spin", 2, (_, n) => { for (long i = 0; i < n; i++) Thread.SpinWait(20); }, settings, totalOperations: 20_000);
        Assert.True(with.Metrics[ThreadSweep.CpuNsPerOpMetric] > 0);
        Assert.False(without.Metrics.ContainsKey(ThreadSweep.CpuNsPerOpMetric));
    }
}
