using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Manaloc.Threading;

/// <summary>
/// Paces the voluntary yields of a dispatcher worker that runs item after item without going idle, without
/// reading the clock per item: the clock is read every <c>_stride</c> items; the stride doubles (up to 64) while
/// reads come less than an eighth of the interval apart and drops to 1 once they come more than a quarter apart.
/// So tiny items pay well under a nanosecond each, and items of a tenth of the interval or more are followed by a
/// read each (after at most 64 items when they follow a run of tiny ones).
/// </summary>
/// <remarks>Owned by one worker thread; no synchronization.</remarks>
internal struct YieldPacer
{
    /// <summary>A busy worker yields its processor after about this much continuous work.</summary>
    /// <remarks>
    /// Why: a dispatcher exists to keep a flood away from the rest of the application, but the
    /// scheduler may still queue another thread (a thread-pool worker with one small item, say) on
    /// the processor a busy worker holds, when every processor is busy; Linux then lets the worker
    /// finish its time slice (up to a scheduler tick, 4 ms at HZ=250) before that thread runs.
    /// Thread.Yield every ~100 µs bounds that wait. When nothing else waits for the processor the
    /// yield returns at once (a system call, well under 1% of the interval). Timed with
    /// <see cref="Stopwatch"/>, not the options' TimeProvider: it paces the processor, it is no
    /// deadline anyone observes.
    /// </remarks>
    internal static readonly long YieldIntervalTicks = Math.Max(1, Stopwatch.Frequency / 10_000); // 100 µs

    private const int MaxStride = 64;
    private long _due;       // timestamp at which the worker yields
    private long _lastRead;  // timestamp of the previous clock read
    private int _stride;     // items between clock reads
    private int _countdown;  // items until the next clock read

    /// <summary>Starts a busy interval (after a wake-up).</summary>
    public void Start()
    {
        _lastRead = Stopwatch.GetTimestamp();
        _due = _lastRead + YieldIntervalTicks;
        _stride = _countdown = 1;
    }

    /// <summary>Counts an item; true when the worker just yielded.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool AfterItem() => --_countdown <= 0 && Check();

    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool Check()
    {
        bool yielded = false;
        long now = Stopwatch.GetTimestamp();
        long sinceRead = now - _lastRead;
        if (sinceRead < YieldIntervalTicks / 8) _stride = Math.Min(_stride * 2, MaxStride);
        else if (sinceRead > YieldIntervalTicks / 4) _stride = 1;
        _lastRead = now;
        if (now >= _due)
        {
            Thread.Yield();
            _lastRead = Stopwatch.GetTimestamp();
            _due = _lastRead + YieldIntervalTicks;
            yielded = true;
        }
        _countdown = _stride;
        return yielded;
    }
}
