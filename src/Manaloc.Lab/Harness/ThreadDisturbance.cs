using Manaloc.Lab.Platform;

namespace Manaloc.Lab.Harness;

/// <summary>
/// Whether a measuring thread lost time over a span of its own work to something other than that work: the scheduler
/// preempting it (its involuntary context switches changed) or its wall time exceeding its CPU time
/// (<see cref="ThreadCpuTime"/>) by more than <see cref="MarginNanoseconds"/>: preemption, the host stealing the virtual
/// CPU, or a page fault blocked on I/O. Work the thread does itself (a resize's copying, a page fault served from memory)
/// is its CPU time and disturbs nothing.
/// </summary>
/// <remarks>
/// The host's stolen time is not the thread's CPU time on Linux (the kernel charges a task from its runqueue's task clock,
/// which leaves out steal under paravirtual time accounting); a stall the host causes shows as wall time with no CPU time
/// and no context switch, which is why the switches alone do not tell. Thread-safe: each call reads the caller's own
/// counters. One <c>getrusage</c> and one <c>clock_gettime</c> per mark, no allocation: a measuring loop may mark between
/// its timed blocks.
/// </remarks>
internal static class ThreadDisturbance
{
    /// <summary>
    /// Lost time a span may show and still count as undisturbed: 20 µs. Over a short span nothing interrupted the two
    /// clocks mostly agree within a microsecond (the CPU clock is read in nanoseconds, and the marks' own system calls are
    /// CPU time on both sides); on a virtual machine the CPU clock may run a little ahead of the wall clock, which reads as
    /// no loss (never as a disturbance) and only makes <see cref="BlockDisturbance.OwnTimeAtLeast"/> larger. The margin is
    /// well above the clocks' disagreement in the direction that counts and far below a stall a judged ratio turns on: a
    /// false alarm costs a block at most the margin from its slowest step, a miss would keep a stall whole.
    /// </summary>
    public const long MarginNanoseconds = 20_000;

    /// <summary>The counters at one end of a span: involuntary switches and CPU nanoseconds, each -1 when the system does not tell.</summary>
    internal readonly record struct Mark(long Switches, long CpuNanoseconds);

    /// <summary>Marks the start of a span: read before its first timestamp, so the CPU time covers the whole wall span.</summary>
    public static Mark Begin() => new(LabNative.InvoluntarySwitchesOfCurrentThread(), CpuNow());

    /// <summary>
    /// Ends a span marked at <paramref name="begin"/> whose wall time was <paramref name="wallTicks"/> (<see cref="LabClock"/>
    /// ticks, its last timestamp taken before this call).
    /// </summary>
    public static BlockDisturbance End(Mark begin, long wallTicks)
    {
        long cpu = CpuNow();
        long switches = LabNative.InvoluntarySwitchesOfCurrentThread();
        return Judge(begin, new Mark(switches, cpu), wallTicks);
    }

    /// <summary>The rule on two marks and the span's wall time (see the class remarks).</summary>
    internal static BlockDisturbance Judge(Mark begin, Mark end, long wallTicks)
    {
        bool switchesKnown = begin.Switches >= 0 && end.Switches >= 0;
        bool cpuKnown = begin.CpuNanoseconds >= 0 && end.CpuNanoseconds >= 0;
        if (!switchesKnown && !cpuKnown) return BlockDisturbance.Unknown;
        bool preempted = switchesKnown && end.Switches != begin.Switches;
        long lostTicks = 0;
        if (cpuKnown)
        {
            long cpuTicks = NanosecondsToTicks(end.CpuNanoseconds - begin.CpuNanoseconds);
            lostTicks = Math.Max(0, wallTicks - cpuTicks);
        }
        bool lost = lostTicks > NanosecondsToTicks(MarginNanoseconds);
        return new BlockDisturbance(true, preempted || lost, lostTicks);
    }

    private static long CpuNow() => ThreadCpuTime.IsAvailable ? ThreadCpuTime.NowNanoseconds() : -1;

    private static long NanosecondsToTicks(long nanoseconds) => (long)((double)nanoseconds * LabClock.Frequency / 1_000_000_000);
}

/// <summary>What <see cref="ThreadDisturbance"/> found over one span.</summary>
/// <param name="Known">Whether the system told anything (neither counter is read off Linux).</param>
/// <param name="Disturbed">Whether the span lost time to something other than its own work.</param>
/// <param name="LostTicks">Its wall time beyond its CPU time (<see cref="LabClock"/> ticks; 0 when the CPU time is not read): an upper bound on what any one step inside it lost.</param>
internal readonly record struct BlockDisturbance(bool Known, bool Disturbed, long LostTicks)
{
    /// <summary>A span the system told nothing about.</summary>
    public static BlockDisturbance Unknown => new(false, false, 0);

    /// <summary>
    /// A lower bound on the own time (CPU time) of the slowest step of the span, which took <paramref name="worstTicks"/>
    /// of wall time: no step lost more than the whole span did.
    /// </summary>
    public long OwnTimeAtLeast(long worstTicks) => Math.Max(0, worstTicks - LostTicks);
}
