namespace Manaloc.Lab.Harness;

/// <summary>
/// Side-by-side runs of whole scenarios: for experiments whose sample is one run of a workload with threads of its own
/// (a flood through a queue, a producer against a slow consumer, a parallel loop) rather than an operation count the
/// harness can calibrate. The harness warms every variant up with one short run, then takes the samples in rounds, one
/// run of every variant per round in a balanced order (<see cref="Rounds.BalancedOrder"/>), so a burst of outside load
/// hits every variant alike; and it accounts every run's wall time, the process's CPU time and the GC's counters.
/// </summary>
/// <remarks>Runs on the calling thread (a run may start threads of its own); the process-wide counters make it one scenario at a time.</remarks>
public static class Scenarios
{
    /// <summary>
    /// Runs each variant once at <paramref name="warmUpSize"/> (not recorded), then <paramref name="rounds"/> rounds of one
    /// run of every variant at <paramref name="size"/>; returns each variant's runs, in round order, keyed by variant.
    /// </summary>
    /// <typeparam name="T">What a run hands back (its own figures: a time it measured, a peak it saw).</typeparam>
    /// <param name="context">The status line and the cancellation, checked before every run.</param>
    /// <param name="variants">Each variant's run: size → its result.</param>
    /// <param name="size">The measured runs' size (items, iterations).</param>
    /// <param name="warmUpSize">The warm-up run's size: enough for the JIT and the threads, short of a sample.</param>
    /// <param name="rounds">Measured rounds (samples per variant).</param>
    public static IReadOnlyDictionary<string, IReadOnlyList<ScenarioRun<T>>> Run<T>(
        ExperimentContext context, IReadOnlyList<(string Variant, Func<int, T> Run)> variants, int size, int warmUpSize, int rounds)
    {
        ArgumentNullException.ThrowIfNull(context);
        ArgumentNullException.ThrowIfNull(variants);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(variants.Count);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(rounds);
        foreach (var (variant, run) in variants)
        {
            context.Status($"{variant} (warm-up)");
            context.Cancellation.ThrowIfCancellationRequested();
            run(warmUpSize);
        }
        var runs = new List<ScenarioRun<T>>[variants.Count];
        for (int v = 0; v < variants.Count; v++) runs[v] = new List<ScenarioRun<T>>(rounds);
        for (int round = 0; round < rounds; round++)
        {
            for (int k = 0; k < variants.Count; k++)
            {
                int v = Rounds.BalancedOrder(variants.Count, round, k);
                var (variant, run) = variants[v];
                context.Status($"{variant}, round {round + 1} of {rounds}");
                context.Cancellation.ThrowIfCancellationRequested();
                var before = GcSnapshot.Take(allThreads: true);
                var cpu = ProcessCpu.StartNow();
                T result = run(size);
                var cpuTime = cpu.Elapsed;
                var wall = LabClock.Since(cpu.Start);
                var after = GcSnapshot.Take(allThreads: true);
                runs[v].Add(new ScenarioRun<T>(result, wall, cpuTime, after.AllocatedBytes - before.AllocatedBytes,
                    new GcCounts { Gen0 = after.Gen0 - before.Gen0, Gen1 = after.Gen1 - before.Gen1, Gen2 = after.Gen2 - before.Gen2 }, (after.Pause - before.Pause).TotalMilliseconds));
            }
        }
        var byVariant = new Dictionary<string, IReadOnlyList<ScenarioRun<T>>>(StringComparer.Ordinal);
        for (int v = 0; v < variants.Count; v++) byVariant[variants[v].Variant] = runs[v];
        return byVariant;
    }
}

/// <summary>One measured run of a scenario: what the run handed back and what the harness accounted around it.</summary>
/// <param name="Result">The run's own result.</param>
/// <param name="Wall">Wall time of the whole run.</param>
/// <param name="Cpu">The process's CPU time over the run, every thread together.</param>
/// <param name="AllocatedBytes">Managed bytes the process allocated over the run (precise, every thread).</param>
/// <param name="Gc">Collections per generation over the run.</param>
/// <param name="GcPauseMs">The GC's pause time over the run.</param>
public sealed record ScenarioRun<T>(T Result, TimeSpan Wall, TimeSpan Cpu, long AllocatedBytes, GcCounts Gc, double GcPauseMs);
