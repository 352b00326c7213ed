using System.Diagnostics;

namespace Manaloc.Lab.Harness;

/// <summary>Counters read before and after a measurement; the difference is what the body cost.</summary>
internal readonly record struct GcSnapshot(
    long AllocatedBytes, int Gen0, int Gen1, int Gen2, TimeSpan Pause, long Contentions, long Timestamp)
{
    /// <summary>Reads the counters. <paramref name="allThreads"/> selects the precise process-wide allocation count.</summary>
    public static GcSnapshot Take(bool allThreads) => new(
        allThreads ? GC.GetTotalAllocatedBytes(precise: true) : GC.GetAllocatedBytesForCurrentThread(),
        GC.CollectionCount(0),
        GC.CollectionCount(1),
        GC.CollectionCount(2),
        GC.GetTotalPauseDuration(),
        Monitor.LockContentionCount,
        Stopwatch.GetTimestamp());

    public static long PeakWorkingSet()
    {
        using var process = Process.GetCurrentProcess();
        return process.PeakWorkingSet64;
    }
}
