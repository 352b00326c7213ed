using System.Diagnostics;

namespace Manaloc.Lab.Soak;

/// <summary>Tells how long the process did not run: stopped, its VM frozen, or its host so overloaded that no thread of it was scheduled.</summary>
internal interface IStallSource
{
    /// <summary>How much of the span from <paramref name="from"/> to <paramref name="to"/> (<see cref="Stopwatch"/> timestamps, <paramref name="to"/> being now) the process did not run.</summary>
    TimeSpan NotRunningBetween(long from, long to);
}

/// <summary>
/// A plain thread (not a <see cref="QuietPoint"/> participant, so a pause never holds it) that wakes
/// every <see cref="Period"/> and records each tick that came more than <see cref="GapThreshold"/>
/// late as a gap: a span when the process did not run. A timed wait of the soak that gives up can
/// then ask whether it was waiting on a partner that could not run at all.
/// </summary>
/// <remarks>
/// <para>Gaps go into a fixed ring (the oldest are overwritten), so the heartbeat allocates nothing
/// after it starts and cannot show up as memory drift.</para>
/// <para>Memory ordering: the ring, the gap totals and the time of the last tick that closed a gap
/// are written and read under one lock. A tick that closes no gap writes the last-tick time with a
/// volatile write and no lock; a reader that misses it sees an older tick, and the open span it then
/// computes is at most one tick longer, below <see cref="GapThreshold"/> unless the process really did
/// not run. A gap is recorded and the last tick moved past it in the same critical section, so no
/// reader counts a gap twice (once as recorded, once as still open).</para>
/// </remarks>
internal sealed class Heartbeat : IStallSource, IDisposable
{
    /// <summary>How often the heartbeat ticks.</summary>
    public static readonly TimeSpan Period = TimeSpan.FromMilliseconds(10);

    /// <summary>A tick later than this beyond <see cref="Period"/> marks a gap (shorter ones are ordinary scheduling delay).</summary>
    public static readonly TimeSpan GapThreshold = TimeSpan.FromMilliseconds(100);

    private const int RingSize = 4096;

    private readonly long _periodTicks = ToTimestampTicks(Period);
    private readonly long _thresholdTicks = ToTimestampTicks(GapThreshold);
    private readonly long[] _gapStart = new long[RingSize], _gapEnd = new long[RingSize];
    private readonly object _gate = new();
    private readonly Thread _thread;
    private long _gaps, _longestGap, _totalGap;
    private long _lastTick;
    private volatile bool _stop;

    public Heartbeat()
    {
        _lastTick = Stopwatch.GetTimestamp();
        _thread = new Thread(Run) { IsBackground = true, Name = "soak heartbeat" };
    }

    /// <summary>Starts ticking (without it the heartbeat ticks only when <see cref="Tick"/> is called, as in tests).</summary>
    public void Start()
    {
        Volatile.Write(ref _lastTick, Stopwatch.GetTimestamp());
        _thread.Start();
    }

    /// <summary>Gaps recorded so far.</summary>
    public long Gaps { get { lock (_gate) return _gaps; } }

    /// <summary>The longest gap so far.</summary>
    public TimeSpan LongestGap { get { lock (_gate) return Stopwatch.GetElapsedTime(0, _longestGap); } }

    /// <summary>All gaps added up.</summary>
    public TimeSpan TotalGap { get { lock (_gate) return Stopwatch.GetElapsedTime(0, _totalGap); } }

    private void Run()
    {
        while (!_stop)
        {
            Thread.Sleep(Period);
            Tick(Stopwatch.GetTimestamp());
        }
    }

    /// <summary>One tick at timestamp <paramref name="now"/>: records a gap if it came late.</summary>
    internal void Tick(long now)
    {
        long last = Volatile.Read(ref _lastTick);
        if (now - last <= _periodTicks + _thresholdTicks)
        {
            Volatile.Write(ref _lastTick, now);
            return;
        }
        lock (_gate)
        {
            long start = last + _periodTicks, length = now - start; // the tick was due at start; nothing of the process ran after it until now
            int slot = (int)(_gaps % RingSize);
            _gapStart[slot] = start;
            _gapEnd[slot] = now;
            _gaps++;
            _totalGap += length;
            _longestGap = Math.Max(_longestGap, length);
            _lastTick = now;
        }
    }

    public TimeSpan NotRunningBetween(long from, long to)
    {
        long total = 0;
        lock (_gate)
        {
            for (long i = Math.Max(0, _gaps - RingSize); i < _gaps; i++)
            {
                int slot = (int)(i % RingSize);
                total += Overlap(from, to, _gapStart[slot], _gapEnd[slot]);
            }
            // A gap still open: the heartbeat has not ticked since the process resumed (the caller ran first).
            if (to - _lastTick > _periodTicks + _thresholdTicks) total += Overlap(from, to, _lastTick + _periodTicks, to);
        }
        return Stopwatch.GetElapsedTime(0, total);
    }

    private static long Overlap(long from, long to, long start, long end) => Math.Max(0, Math.Min(to, end) - Math.Max(from, start));

    private static long ToTimestampTicks(TimeSpan span) => (long)(span.TotalSeconds * Stopwatch.Frequency);

    public void Dispose()
    {
        _stop = true;
        if (_thread.ThreadState != System.Threading.ThreadState.Unstarted) _thread.Join();
    }
}
