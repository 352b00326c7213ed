using System.Diagnostics;

namespace Manaloc.Lab.Harness;

/// <summary>
/// Runs a body on N threads released together by a barrier and measures their total throughput.
/// </summary>
/// <remarks>
/// The threads are created once per measurement and reused for the warm-up and every sample, so
/// thread start-up is neither timed nor counted as allocation. A sample's time runs from the
/// barrier's release to the moment the last thread finishes: both instants are taken inside the
/// barrier's post-phase action, which runs after every participant has arrived and before any is
/// released. Allocation is the process-wide precise count, so it includes every thread.
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
    public static Measurement Measure(
        string variant,
        int threads,
        Action<int, long> body,
        RunSettings settings,
        Parameters? parameters = null,
        long? totalOperations = null)
    {
        ArgumentNullException.ThrowIfNull(body);
        ArgumentOutOfRangeException.ThrowIfLessThan(threads, 1);
        using var crew = new Crew(threads, body);
        long total = totalOperations ?? Calibrate(crew, threads, settings);
        if (total < threads) throw new ArgumentOutOfRangeException(nameof(totalOperations), total, "At least one operation per thread.");
        long perThread = total / threads;
        total = perThread * threads;
        if (totalOperations is not null)
        {
            var warmStart = Stopwatch.GetTimestamp();
            do { crew.Run(perThread); } while (Stopwatch.GetElapsedTime(warmStart) < settings.WarmUp);
        }

        var samples = new double[settings.Samples];
        crew.Placement = new PlacementRecorder(threads); // only the measured rounds say where the figures came from
        var before = GcSnapshot.Take(allThreads: true);
        for (int i = 0; i < samples.Length; i++)
        {
            samples[i] = crew.Run(perThread).TotalNanoseconds / total;
        }
        var after = GcSnapshot.Take(allThreads: true);
        var withThreads = (parameters ?? Parameters.None).With("threads", threads);
        crew.ThrowIfFailed();
        // Run returned after the round's closing barrier, so every thread's last placement sample is visible here.
        return Bench.Build(variant, withThreads, threads, total, samples, before, after) with { Placement = threads > 1 ? crew.Placement.Build() : null };
    }

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
        // the count until a sample times the barrier instead of the body.
        double fastest = nsPerRound;
        while (Stopwatch.GetElapsedTime(warmStart) < settings.WarmUp)
        {
            fastest = Math.Min(fastest, crew.Run(perThread).TotalNanoseconds / perThread);
            perThread = (long)Math.Clamp(target / Math.Max(fastest, 0.01), 1, 1L << 36);
        }
        return perThread * threads;
    }

    /// <summary>N persistent threads that run one round of the body per call to <see cref="Run"/>.</summary>
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

        public Crew(int count, Action<int, long> body)
        {
            _body = body;
            // The post-phase action runs once every participant has arrived and before any is
            // released, so its timestamp is both "all finished" and "about to start together".
            _barrier = new Barrier(count + 1, _ => _phaseTimestamp = Stopwatch.GetTimestamp());
            _threads = new Thread[count];
            for (int i = 0; i < count; i++)
            {
                int index = i;
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
                try
                {
                    _body(index, Volatile.Read(ref _operations));
                    Placement?.Sample(index);
                }
                catch (Exception e)
                {
                    Interlocked.CompareExchange(ref _failure, e, null);
                }
                _barrier.SignalAndWait(); // end of round
            }
        }

        /// <summary>Runs one round; returns the time from release to the last thread's finish.</summary>
        public TimeSpan Run(long operationsPerThread)
        {
            Volatile.Write(ref _operations, operationsPerThread);
            _barrier.SignalAndWait();
            long start = _phaseTimestamp; // written by the post-phase action before release (barrier orders it)
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
