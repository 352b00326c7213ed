namespace Manaloc.Lab.Harness;

/// <summary>
/// The process's CPU time over a span of wall time, started at a moment of <see cref="LabClock"/>: every thread's time
/// on a core, user and kernel (<see cref="Environment.CpuUsage"/>). Less sensitive than wall time to other load on the
/// machine, and, divided by the wall time, how many cores the process kept busy.
/// </summary>
/// <remarks>An immutable value: copies share the start; thread-safe (each read is a snapshot of the process's counters).</remarks>
public readonly struct ProcessCpu
{
    private ProcessCpu(TimeSpan cpuAtStart, long start)
    {
        CpuAtStart = cpuAtStart;
        Start = start;
    }

    /// <summary>The process's CPU time when the span started.</summary>
    public TimeSpan CpuAtStart { get; }

    /// <summary>The timestamp (of <see cref="LabClock.Now"/>) the span started at.</summary>
    public long Start { get; }

    /// <summary>Starts a span now.</summary>
    public static ProcessCpu StartNow() => new(Environment.CpuUsage.TotalTime, LabClock.Now);

    /// <summary>The process's CPU time since the start, every thread together.</summary>
    public TimeSpan Elapsed => Environment.CpuUsage.TotalTime - CpuAtStart;

    /// <summary>Cores kept busy on average since the start: CPU time over wall time (0 before any wall time has passed).</summary>
    public double Cores
    {
        get
        {
            var cpu = Elapsed; // read first: the wall time then covers it
            double wall = LabClock.Since(Start).TotalSeconds;
            return wall > 0 ? cpu.TotalSeconds / wall : 0;
        }
    }
}
