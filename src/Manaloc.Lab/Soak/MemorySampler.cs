using System.Diagnostics;

namespace Manaloc.Lab.Soak;

/// <summary>
/// Once a second, with the load and dispatcher threads parked at their quiet point: the managed heap's live bytes
/// after full collections, less what the soak holds in flight at that same point; the native bytes
/// the record allocator has reserved; the process's private bytes.
/// </summary>
/// <remarks>
/// Nothing of the soak allocates while it measures, so the series moves only when something the
/// threads left behind moves: the library's state, the runtime's, or the soak's fixed bookkeeping
/// (sized up front, this sampler's list included, so it cannot grow).
/// </remarks>
internal sealed class MemorySampler(TimeSpan duration)
{
    /// <summary>Collections at one quiet point are repeated until the in-flight count stops changing, at most this many times.</summary>
    private const int MaxCollections = 6;

    private readonly List<(double Seconds, double Managed, double Native, double Private)> _samples = new((int)duration.TotalSeconds + 16);
    private readonly Process _process = Process.GetCurrentProcess();

    public double LastManagedMb => _samples.Count == 0 ? 0 : _samples[^1].Managed / (1 << 20);
    public double LastNativeMb => _samples.Count == 0 ? 0 : _samples[^1].Native / (1 << 20);
    public double LastPrivateMb => _samples.Count == 0 ? 0 : _samples[^1].Private / (1 << 20);

    /// <summary>Samples where the in-flight count still changed after <see cref="MaxCollections"/> collections (the figure is then less exact).</summary>
    public int UnsettledSamples { get; private set; }

    /// <summary>Collections per sample, added up (how much the sampler made the GC work).</summary>
    public long Collections { get; private set; }

    /// <summary>Time the soak threads spent parked for samples, added up (load that did not run).</summary>
    public TimeSpan Parked => _parked.Elapsed;

    private readonly Stopwatch _parked = new();

    private const string MemoryPause = "memory pause";

    /// <summary>
    /// Parks every soak thread, takes one sample and lets them go; false (no sample) if they did not all
    /// park within the hang limit while the process ran (a pause that a stall of the whole process held
    /// up is counted as a stall and waited for again).
    /// </summary>
    public bool SampleAtQuietPoint(TimeSpan elapsed, SoakRun run, out int parked, out int participants)
    {
        _parked.Start();
        try
        {
            long start = Stopwatch.GetTimestamp();
            while (!run.Quiet.Pause(run.Hang.Limit))
            {
                if (!run.Hang.ExcusedByStall(start, MemoryPause))
                {
                    (parked, participants) = run.Quiet.Snapshot();
                    return false;
                }
                start = Stopwatch.GetTimestamp();
            }
            Sample(elapsed, run);
            (parked, participants) = run.Quiet.Snapshot();
            return true;
        }
        finally
        {
            run.Quiet.Resume();
            _parked.Stop();
        }
    }

    private void Sample(TimeSpan elapsed, SoakRun run)
    {
        // Full, blocking, compacting collections; after each the finalizer thread runs the pools'
        // gen-2 callbacks, which may trim idle objects (changing the in-flight count) and leave
        // finalizable garbage for the next collection. At least two collections, then until a
        // collection's callbacks change nothing: the last collection's live bytes then contain
        // exactly the in-flight bytes counted before it.
        long inFlight = run.CountInFlightBytes();
        for (int collections = 1; ; collections++)
        {
            GC.Collect(GC.MaxGeneration, GCCollectionMode.Forced, blocking: true, compacting: true);
            GC.WaitForPendingFinalizers();
            long after = run.CountInFlightBytes();
            bool settled = after == inFlight;
            inFlight = after;
            if ((settled && collections >= 2) || collections == MaxCollections)
            {
                if (!settled) UnsettledSamples++;
                Collections += collections;
                break;
            }
        }
        // The GC's own record of the last collection: live bytes at that moment, untouched by what
        // the finalizer thread allocated afterwards.
        var gc = GC.GetGCMemoryInfo(GCKind.FullBlocking);
        long managed = gc.HeapSizeBytes - gc.FragmentedBytes - inFlight;
        _process.Refresh();
        _samples.Add((elapsed.TotalSeconds, managed, run.NativeBytes, _process.PrivateMemorySize64));
    }

    /// <summary>Least-squares slope of each series after <paramref name="warmUp"/>, with its standard error, as % of its mean per minute.</summary>
    public IReadOnlyList<Drift> Drift(TimeSpan warmUp)
    {
        var after = _samples.Where(s => s.Seconds >= warmUp.TotalSeconds).ToList();
        return
        [
            Fit("managed heap", after.Select(s => (s.Seconds, s.Managed)).ToList()),
            Fit("native (allocator reserved)", after.Select(s => (s.Seconds, s.Native)).ToList()),
            Fit("process private bytes", after.Select(s => (s.Seconds, s.Private)).ToList()),
        ];
    }

    private static Drift Fit(string name, List<(double X, double Y)> points)
    {
        if (points.Count < 3) return new Drift(name, 0, 0, 0, 0, 0, points.Count);
        double meanX = points.Average(p => p.X), meanY = points.Average(p => p.Y);
        double sxy = points.Sum(p => (p.X - meanX) * (p.Y - meanY)), sxx = points.Sum(p => (p.X - meanX) * (p.X - meanX));
        double slope = sxx == 0 ? 0 : sxy / sxx; // bytes per second
        double residuals = points.Sum(p => Math.Pow(p.Y - meanY - slope * (p.X - meanX), 2));
        double standardError = sxx == 0 ? 0 : Math.Sqrt(residuals / (points.Count - 2) / sxx);
        double spread = Math.Sqrt(residuals / (points.Count - 2));
        double percent = meanY == 0 ? 0 : slope * 60 / meanY * 100;
        return new Drift(name, meanY / (1 << 20), slope * 60 / 1024, standardError * 60 / 1024, percent, spread / 1024, points.Count);
    }
}

/// <summary>One memory series after warm-up: mean, slope (± its standard error), slope relative to the mean, and the samples' spread around the fitted line.</summary>
internal readonly record struct Drift(string Name, double MeanMb, double KbPerMinute, double StandardErrorKbPerMinute, double PercentPerMinute, double SpreadKb, int Samples);
