using System.Diagnostics;

namespace Manaloc.Lab.Soak;

/// <summary>
/// Decides whether a soak wait that gave up after <see cref="Limit"/> is a hang (a violation) or a
/// stall of the whole process (counted and reported; the caller waits again). The soak's
/// time-based checks (a ping-pong wait, a memory pause, a dispatcher's shutdown, a thread's end)
/// all go through it.
/// </summary>
/// <remarks>
/// <para>Why: a wait's limit runs on the wall clock, which goes on while the process is stopped or
/// its VM frozen. After a stall longer than the limit every timed wait is overdue at once, and a
/// waiter that resumes before its partner gives up although the partner never had a chance to run
/// (a correct timeout that looks like a lost wakeup).</para>
/// <para>Rule: a wait is excused only if the process ran for less than half of <see cref="Limit"/>
/// while it waited (by the <see cref="IStallSource"/>). A partner that had 15 s of running time
/// and did not answer is hung whatever else happened, so no real hang or missed wake-up is excused
/// by an unrelated stall.</para>
/// </remarks>
internal sealed class HangWatch(IStallSource stalls, TimeSpan limit)
{
    private const int Kept = 32;

    private readonly object _gate = new();
    private readonly Stall[] _kept = new Stall[Kept];
    private long _count;
    private TimeSpan _longest, _total;

    /// <summary>How long a soak wait may take.</summary>
    public TimeSpan Limit => limit;

    /// <summary>Waits excused as stalls so far.</summary>
    public long Count { get { lock (_gate) return _count; } }

    /// <summary>The longest time the process did not run within one excused wait.</summary>
    public TimeSpan Longest { get { lock (_gate) return _longest; } }

    /// <summary>The first excused waits (at most 32), in order.</summary>
    public IReadOnlyList<Stall> FirstStalls { get { lock (_gate) return _kept.Take((int)Math.Min(_count, Kept)).ToArray(); } }

    /// <summary>Time the process did not run within excused waits, added up.</summary>
    public TimeSpan Total { get { lock (_gate) return _total; } }

    /// <summary>
    /// A wait for <paramref name="what"/> that started at <paramref name="start"/> (a <see cref="Stopwatch"/>
    /// timestamp) has just given up: true if the process ran for less than half of <see cref="Limit"/>
    /// meanwhile (recorded as a stall: wait again), false if it is a hang (report it).
    /// </summary>
    public bool ExcusedByStall(long start, string what) => ExcusedByStall(start, Stopwatch.GetTimestamp(), what);

    /// <summary>As <see cref="ExcusedByStall(long, string)"/>, with the wait's end given.</summary>
    internal bool ExcusedByStall(long start, long end, string what)
    {
        var waited = Stopwatch.GetElapsedTime(start, end);
        var notRunning = NotRunning(start, end);
        if ((waited - notRunning) * 2 >= limit) return false;
        lock (_gate)
        {
            if (_count < Kept) _kept[_count] = new Stall(what, waited, notRunning);
            _count++;
            _total += notRunning;
            if (notRunning > _longest) _longest = notRunning;
        }
        return true;
    }

    /// <summary>How long the process did not run between two timestamps, by the stall source.</summary>
    public TimeSpan NotRunning(long start, long end)
    {
        var waited = Stopwatch.GetElapsedTime(start, end);
        var notRunning = stalls.NotRunningBetween(start, end);
        return notRunning > waited ? waited : notRunning;
    }

    /// <summary>One wait excused as a stall: what waited, for how long, and how much of that the process did not run.</summary>
    internal readonly record struct Stall(string What, TimeSpan Waited, TimeSpan NotRunning);
}
