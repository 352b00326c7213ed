using System.Diagnostics;

namespace Manaloc.Lab.Harness;

/// <summary>
/// Runs a body on N threads released together by a barrier and measures their total throughput.
/// </summary>
/// <remarks>
/// The calling thread runs thread index 0's share itself and N−1 helper threads run the others: the helpers are created
/// once per measurement and reused for the warm-up and every sample, so thread start-up is neither timed nor counted as
/// allocation. Why the caller takes a share rather than waiting for N helpers: at every release N+1 threads were runnable
/// on N CPUs (the caller releases them, then blocks), so the scheduler, finding no idle CPU, queued a helper behind another
/// on one CPU and, the helper being cache-hot, did not move it once the caller slept; on a 2-CPU machine a quarter to a
/// third of millisecond-long 2-thread samples ran both shares on one CPU, one after the other (timed about twice as long).
/// With the caller working, the N threads released are the N runnable ones. A sample's time runs from the barrier's
/// release to the moment the last thread finishes: both instants are taken inside the barrier's post-phase action, which
/// runs after every participant has arrived and before any is released. Allocation is the process-wide precise count, so
/// it includes every thread.
/// </remarks>
public static class ThreadSweep
{
    /// <summary>Measures <paramref name="body"/> on <paramref name="threads"/> threads.</summary>
    /// <param name="variant">Variant name.</param>
    /// <param name="threads">Number of threads.</param>
    /// <param name="body">Called as body(threadIndex, operations) on each thread.</param>
    /// <param name="settings">Warm-up, sample target and count.</param>
    /// <param name="parameters">Parameters recorded with the measurement (the harness adds <c>threads</c>).</param>
    /// <param name="totalOperations">A fixed total split evenly over the threads; calibrated when null.</param>
    /// <param name="threadCpu">
    /// Also account each thread's CPU time over the samples (where the thread CPU clock is available, <see cref="ThreadCpuTime"/>):
    /// the metric <see cref="CpuNsPerOpMetric"/>, time the threads ran rather than time they waited for a core another process had.
    /// </param>
    /// <param name="warmUpOperations">
    /// With <paramref name="totalOperations"/>: the warm-up is one untimed pass of this many operations in all (split as the
    /// samples are) instead of full passes for <see cref="RunSettings.WarmUp"/>, at least one. For a cell sampled in many short
    /// rounds whose code is already tiered up: what a round's warm-up must do is start its threads and bring its own working
    /// set back into cache, which a fraction of a sample does.
    /// </param>
    public static Measurement Measure(
        string variant,
        int threads,
        Action<int, long> body,
        RunSettings settings,
        Parameters? parameters = null,
        long? totalOperations = null,
        bool threadCpu = false,
        long? warmUpOperations = null)
    {
        ArgumentNullException.ThrowIfNull(body);
        ArgumentOutOfRangeException.ThrowIfLessThan(threads, 1);
        using var crew = new Crew(threads, body);
        long total = totalOperations ?? Calibrate(crew, threads, settings);
        if (total < threads) throw new ArgumentOutOfRangeException(nameof(totalOperations), total, "At least one operation per thread.");
        long perThread = total / threads;
        total = perThread * threads;
        if (totalOperations is not null && warmUpOperations is { } warmUp)
        {
            crew.Run(Math.Max(1, warmUp / threads));
        }
        else if (totalOperations is not null)
        {
            var warmStart = Stopwatch.GetTimestamp();
            do { crew.Run(perThread); } while (Stopwatch.GetElapsedTime(warmStart) < settings.WarmUp);
        }

        var samples = new double[settings.Samples];
        crew.Placement = new PlacementRecorder(threads); // only the measured rounds say where the figures came from
        crew.AccountCpu = threadCpu && ThreadCpuTime.IsAvailable; // only the measured rounds' CPU counts
        var before = GcSnapshot.Take(allThreads: true);
        for (int i = 0; i < samples.Length; i++)
        {
            samples[i] = crew.Run(perThread).TotalNanoseconds / total;
        }
        var after = GcSnapshot.Take(allThreads: true);
        var withThreads = (parameters ?? Parameters.None).With("threads", threads);
        crew.ThrowIfFailed();
        // Run returned after the round's closing barrier, so every thread's last placement sample and CPU time is visible here.
        var measurement = Bench.Build(variant, withThreads, threads, total, samples, before, after) with { Placement = threads > 1 ? crew.Placement.Build() : null };
        if (!crew.AccountCpu) return measurement;
        return measurement with { Metrics = new Dictionary<string, double>(measurement.Metrics) { [CpuNsPerOpMetric] = (double)crew.CpuNanoseconds / (total * (long)samples.Length) } };
    }

    /// <summary>The metric of a sweep measured with its threads' CPU time: CPU nanoseconds per operation, every thread together.</summary>
    public const string CpuNsPerOpMetric = "cpuNsPerOp";

    private static long Calibrate(Crew crew, int threads, RunSettings settings)
    {
        double target = settings.SampleTarget.TotalNanoseconds;
        long perThread = 1;
        var warmStart = Stopwatch.GetTimestamp();
        double nsPerRound;
        while (true)
        {
            double elapsed = crew.Run(perThread).TotalNanoseconds;
            if (elapsed >= target / 8 || perThread >= 1L << 36)
            {
                nsPerRound = elapsed / perThread;
                break;
            }
            perThread = elapsed < target / 1000 ? perThread * 16 : perThread * 2;
        }
        perThread = (long)Math.Clamp(target / Math.Max(nsPerRound, 0.01), 1, 1L << 36);
        // As in Bench.Calibrate: follow the fastest round, so one descheduled round cannot shrink
        // the count until a sample times the barrier instead of the body, and run at least
        // Bench.MinimumSizingRounds, so a count sized from one slowed run is corrected.
        double fastest = nsPerRound;
        for (int round = 0; round < Bench.MinimumSizingRounds || Stopwatch.GetElapsedTime(warmStart) < settings.WarmUp; round++)
        {
            fastest = Math.Min(fastest, crew.Run(perThread).TotalNanoseconds / perThread);
            perThread = (long)Math.Clamp(target / Math.Max(fastest, 0.01), 1, 1L << 36);
        }
        return perThread * threads;
    }

    /// <summary>The calling thread (index 0) and N−1 persistent helpers, which run one round of the body per call to <see cref="Run"/>.</summary>
    private sealed class Crew : IDisposable
    {
        private readonly Thread[] _threads;
        private readonly Barrier _barrier;
        private readonly Action<int, long> _body;
        private long _operations;
        private bool _stop;
        private long _phaseTimestamp;
        private Exception? _failure;

        /// <summary>
        /// Set by the coordinator between rounds (the barrier orders the write before the threads read it);
        /// each thread samples its own CPU into it after its body, before the round's closing barrier.
        /// </summary>
        public PlacementRecorder? Placement { get; set; }

        /// <summary>Set by the coordinator between rounds, as <see cref="Placement"/>: each thread adds its body's CPU time to <see cref="CpuNanoseconds"/>.</summary>
        public bool AccountCpu { get; set; }

        private long _cpuNanoseconds;

        /// <summary>The threads' CPU time in their bodies since <see cref="AccountCpu"/> was set (read after a round's closing barrier).</summary>
        public long CpuNanoseconds => Interlocked.Read(ref _cpuNanoseconds);

        public Crew(int count, Action<int, long> body)
        {
            _body = body;
            // The post-phase action runs once every participant has arrived and before any is
            // released, so its timestamp is both "all finished" and "about to start together".
            _barrier = new Barrier(count, _ => _phaseTimestamp = Stopwatch.GetTimestamp());
            _threads = new Thread[count - 1];
            for (int i = 0; i < _threads.Length; i++)
            {
                int index = i + 1; // index 0 is the calling thread's (see Run)
                _threads[i] = new Thread(() => Work(index)) { IsBackground = true, Name = $"lab-sweep-{index}" };
                _threads[i].Start();
            }
        }

        private void Work(int index)
        {
            while (true)
            {
                _barrier.SignalAndWait(); // start of round: _operations and _stop were written before the coordinator arrived
                if (Volatile.Read(ref _stop)) return;
                RunShare(index);
                _barrier.SignalAndWait(); // end of round
            }
        }

        /// <summary>One thread's share of a round; a failure is kept for the caller, so every thread still reaches the round's closing barrier.</summary>
        private void RunShare(int index)
        {
            try
            {
                bool cpu = AccountCpu;
                long cpuStart = cpu ? ThreadCpuTime.NowNanoseconds() : 0;
                _body(index, Volatile.Read(ref _operations));
                if (cpu) Interlocked.Add(ref _cpuNanoseconds, ThreadCpuTime.NowNanoseconds() - cpuStart);
                Placement?.Sample(index);
            }
            catch (Exception e)
            {
                Interlocked.CompareExchange(ref _failure, e, null);
            }
        }

        /// <summary>Runs one round, the calling thread taking index 0's share; returns the time from release to the last thread's finish.</summary>
        public TimeSpan Run(long operationsPerThread)
        {
            Volatile.Write(ref _operations, operationsPerThread);
            _barrier.SignalAndWait();
            long start = _phaseTimestamp; // written by the post-phase action before release (barrier orders it)
            RunShare(0);
            _barrier.SignalAndWait();
            long end = _phaseTimestamp;
            ThrowIfFailed();
            return Stopwatch.GetElapsedTime(start, end);
        }

        public void ThrowIfFailed()
        {
            if (Volatile.Read(ref _failure) is { } failure)
            {
                throw new InvalidOperationException($"A sweep thread failed: {failure.Message}", failure);
            }
        }

        public void Dispose()
        {
            Volatile.Write(ref _stop, true);
            _barrier.SignalAndWait();
            foreach (var thread in _threads) thread.Join();
            _barrier.Dispose();
        }
    }
}
