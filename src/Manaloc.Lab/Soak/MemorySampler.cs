using System.Diagnostics;

namespace Manaloc.Lab.Soak;

/// <summary>Managed heap (after a full collection, less the buffers rented or retained by the buffer manager at that moment), native bytes reserved by the soak's allocators, and process private bytes, once a second.</summary>
internal sealed class MemorySampler
{
    private readonly List<(double Seconds, double Managed, double Native, double Private)> _samples = [];
    private readonly Process _process = Process.GetCurrentProcess();

    public double LastManagedMb => _samples.Count == 0 ? 0 : _samples[^1].Managed / (1 << 20);
    public double LastNativeMb => _samples.Count == 0 ? 0 : _samples[^1].Native / (1 << 20);
    public double LastPrivateMb => _samples.Count == 0 ? 0 : _samples[^1].Private / (1 << 20);

    /// <param name="elapsed">Time since the start.</param>
    /// <param name="nativeBytes">Native bytes the soak's allocators hold.</param>
    /// <param name="inFlightManagedBytes">Managed bytes held on purpose right now (rented buffers, and idle buffers the buffer manager retains up to its caps): subtracted, so the series shows growth, not load or bounded retention.</param>
    public void Sample(TimeSpan elapsed, long nativeBytes, long inFlightManagedBytes)
    {
        // A full blocking collection each second: what is left is what the soak really retains
        // (and it runs the pools' gen-2 trimming callbacks under load, which the soak wants anyway).
        long managed = GC.GetTotalMemory(forceFullCollection: true) - inFlightManagedBytes;
        _process.Refresh();
        _samples.Add((elapsed.TotalSeconds, managed, nativeBytes, _process.PrivateMemorySize64));
    }

    /// <summary>Least-squares slope of each series after <paramref name="warmUp"/>, as % of its mean per minute.</summary>
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
        if (points.Count < 3) return new Drift(name, 0, 0, 0, points.Count);
        double meanX = points.Average(p => p.X), meanY = points.Average(p => p.Y);
        double sxy = points.Sum(p => (p.X - meanX) * (p.Y - meanY)), sxx = points.Sum(p => (p.X - meanX) * (p.X - meanX));
        double slopePerMinute = sxx == 0 ? 0 : sxy / sxx * 60;
        double percent = meanY == 0 ? 0 : slopePerMinute / meanY * 100;
        return new Drift(name, meanY / (1 << 20), slopePerMinute / 1024, percent, points.Count);
    }
}

/// <summary>One memory series after warm-up: mean, slope and slope relative to the mean.</summary>
internal readonly record struct Drift(string Name, double MeanMb, double KbPerMinute, double PercentPerMinute, int Samples);
