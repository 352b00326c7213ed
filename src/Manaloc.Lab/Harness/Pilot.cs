namespace Manaloc.Lab.Harness;

/// <summary>
/// Pilot runs: the harness's way to find an operation count for a body its calibration can misjudge. A body that waits on other threads (pool wake-ups, a hand-off between two threads,
/// a contended lock) can, on a loaded machine, have one late wake-up during <see cref="Bench"/>'s or
/// <see cref="ThreadSweep"/>'s calibration and settle on a few operations per sample that then time the wake-up or
/// the start barrier instead of the body. A pilot grows the count until a run is long enough for one late wake-up
/// not to dominate, and keeps the best of a few runs; the experiment passes the count as a fixed operation count.
/// </summary>
/// <remarks>Stateless; each call runs on the calling thread (and, for the threaded form, on threads of its own).</remarks>
public static class Pilot
{
    /// <summary>
    /// Nanoseconds per operation of <paramref name="body"/>: the count starts at <paramref name="startOperations"/> and
    /// grows fourfold until one run takes <paramref name="minimum"/> (or reaches <paramref name="maxOperations"/>), then
    /// the best of that run and <paramref name="runs"/> − 1 more of the same count.
    /// </summary>
    /// <param name="body">Performs the given number of operations.</param>
    /// <param name="startOperations">The first run's count.</param>
    /// <param name="minimum">How long a run must take before its count is kept.</param>
    /// <param name="runs">Runs at the kept count, the best of which counts (at least 1).</param>
    /// <param name="maxOperations">The count stops growing here.</param>
    public static double NsPerOp(Action<long> body, long startOperations, TimeSpan minimum, int runs = 2, long maxOperations = 1 << 24)
    {
        ArgumentNullException.ThrowIfNull(body);
        return Best(ops => LabClock.Time(() => body(ops)), startOperations, minimum, runs, maxOperations);
    }

    /// <summary>
    /// Nanoseconds per operation of <paramref name="body"/> on <paramref name="threads"/> threads released together
    /// (<see cref="LabThreads.RunTogether"/>), counting every thread's operations, found as <see cref="NsPerOp(Action{long}, long, TimeSpan, int, long)"/>
    /// finds it for one thread; the count that grows is the count per thread.
    /// </summary>
    /// <param name="threads">Threads started together.</param>
    /// <param name="body">Called as body(threadIndex, operations) on each thread.</param>
    /// <param name="startPerThread">The first run's count per thread.</param>
    /// <param name="minimum">How long a run must take before its count is kept.</param>
    /// <param name="runs">Runs at the kept count, the best of which counts (at least 1).</param>
    /// <param name="maxPerThread">The count per thread stops growing here.</param>
    public static double NsPerOp(int threads, Action<int, long> body, long startPerThread, TimeSpan minimum, int runs = 2, long maxPerThread = 1 << 24)
    {
        ArgumentNullException.ThrowIfNull(body);
        ArgumentOutOfRangeException.ThrowIfLessThan(threads, 1);
        return Best(perThread => LabThreads.RunTogether(threads, i => body(i, perThread)), startPerThread, minimum, runs, maxPerThread) / threads;
    }

    /// <summary>
    /// Sizes a unit of synthetic work (a spin) to cost about <paramref name="perCall"/> on this machine: times
    /// <paramref name="probeCalls"/> calls of <paramref name="call"/> at a spin count, rescales the count by how far the
    /// cost is from the target, and stops once it is within 0.75–1.5 times the target (at most six attempts).
    /// </summary>
    /// <remarks>
    /// Each attempt's calls are timed in <see cref="ProbeSlices"/> slices and the fastest slice counts: a spin's cost is
    /// the CPU's, and a slice in which the thread was descheduled (a loaded machine) would otherwise make the spin look
    /// dearer, size it too small, and leave the work cheaper than asked for the whole run that follows.
    /// </remarks>
    /// <param name="call">One call of the work with the given spin count.</param>
    /// <param name="perCall">The cost one call should have.</param>
    /// <param name="startSpins">The first attempt's spin count.</param>
    /// <param name="probeCalls">Calls timed per attempt.</param>
    /// <returns>The spin count and one call's measured cost at it, in microseconds.</returns>
    public static (int Spins, double Micros) Spins(Action<int> call, TimeSpan perCall, int startSpins = 30, int probeCalls = 20_000)
    {
        ArgumentNullException.ThrowIfNull(call);
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(perCall, TimeSpan.Zero);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(startSpins);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(probeCalls);
        double target = perCall.TotalMicroseconds;
        int spins = startSpins;
        int perSlice = Math.Max(1, probeCalls / ProbeSlices);
        double Probe(int n)
        {
            double fastest = double.PositiveInfinity;
            for (int slice = 0; slice < ProbeSlices; slice++)
            {
                fastest = Math.Min(fastest, LabClock.Time(() => { for (int i = 0; i < perSlice; i++) call(n); }).TotalMicroseconds / perSlice);
            }
            return fastest;
        }
        for (int attempt = 0; attempt < 6; attempt++)
        {
            double micros = Probe(spins);
            if (micros > target * 0.75 && micros < target * 1.5) return (spins, micros);
            spins = Math.Clamp((int)(spins * target / Math.Max(micros, 0.01)), 1, 1_000_000);
        }
        return (spins, Probe(spins));
    }

    /// <summary>Slices each of <see cref="Spins"/>'s attempts is timed in; the fastest counts.</summary>
    public const int ProbeSlices = 5;

    /// <summary>The whole operations that fill one sample target of <paramref name="settings"/> at <paramref name="nsPerOp"/>.</summary>
    public static long OperationsPerSample(RunSettings settings, double nsPerOp)
    {
        ArgumentNullException.ThrowIfNull(settings);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(nsPerOp);
        return (long)(settings.SampleTarget.TotalNanoseconds / nsPerOp);
    }

    private static double Best(Func<long, TimeSpan> run, long start, TimeSpan minimum, int runs, long max)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(start);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(runs);
        long ops = start;
        TimeSpan elapsed;
        while ((elapsed = run(ops)) < minimum && ops < max) ops *= 4;
        for (int r = 1; r < runs; r++)
        {
            var again = run(ops);
            if (again < elapsed) elapsed = again;
        }
        return elapsed.TotalNanoseconds / ops;
    }
}
