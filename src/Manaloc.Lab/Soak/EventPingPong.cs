using System.Diagnostics;
using System.Globalization;
using Manaloc.Threading;

namespace Manaloc.Lab.Soak;

/// <summary>
/// Two threads pass one signal back and forth on a pair of <see cref="EconomicResetEvent"/>s. Each side
/// records its last step and counts its Sets and wakes, so a wait that gives up can tell whether a
/// Set was really due (the partner set after this side's last wake) and say what the partner was doing.
/// </summary>
/// <remarks>
/// <para>Protocol: strict alternation. Ping sets Pong's event once at the start; from then on each side
/// waits on its own event and, when woken, sets the partner's. So the partner's Sets minus this side's
/// wakes is 0 (nothing due: the partner has not set yet) or 1 (a Set is due: this side should wake).</para>
/// <para>Neither side parks at the <see cref="QuietPoint"/> (the soak does not make them participants):
/// a side that parked right after passing the signal on could be overtaken before its check (the partner
/// wakes, passes the signal back and waits), and would then park holding the signal while the partner
/// waits for it and the pause waits for the partner. The quiet point is read only to say, in a hang's
/// diagnosis, whether a pause was on.</para>
/// <para>Memory ordering: each side's step and counters are written only by its own thread with
/// volatile writes and read by the other side with volatile reads, for a diagnosis only; the
/// protocol itself is ordered by the events (a Set is a full fence, see <see cref="EconomicResetEvent"/>).</para>
/// </remarks>
internal sealed class EventPingPong(HangWatch hang, QuietPoint quiet, Action<string> violation, Action handOff) : IDisposable
{
    private volatile bool _stop;

    public Side Ping { get; } = new("ping");

    public Side Pong { get; } = new("pong");

    /// <summary>Ping's loop: sets Pong's event first.</summary>
    public void RunPing() => Run(Ping, Pong, first: true);

    /// <summary>Pong's loop.</summary>
    public void RunPong() => Run(Pong, Ping, first: false);

    private void Run(Side mine, Side theirs, bool first)
    {
        if (first) mine.Pass(theirs);
        while (!_stop)
        {
            if (!WaitForPartner(mine, theirs)) break;
            mine.Step = PingPongStep.Woken;
            handOff();
            mine.Pass(theirs);
        }
        mine.Step = PingPongStep.Stopped;
        theirs.Event.Set(); // let the partner see the stop
    }

    /// <summary>Waits for the partner's Set: true when woken; false at the stop or on a hang (reported).</summary>
    private bool WaitForPartner(Side mine, Side theirs)
    {
        long start = Stopwatch.GetTimestamp();
        while (true)
        {
            mine.Step = PingPongStep.Waiting;
            if (mine.Event.Wait(hang.Limit))
            {
                mine.CountWake();
                return true;
            }
            if (_stop) return false;
            if (hang.ExcusedByStall(start, mine.WaitName)) // the process was not running: the partner may not have had a chance
            {
                start = Stopwatch.GetTimestamp();
                continue;
            }
            violation(DescribeHang(mine, theirs, start));
            return false;
        }
    }

    private string DescribeHang(Side mine, Side theirs, long start)
    {
        long now = Stopwatch.GetTimestamp();
        long sets = theirs.Sets, wakes = mine.Wakes;
        var c = CultureInfo.InvariantCulture;
        string due = sets > wakes
            ? string.Create(c, $"a Set was due: {theirs.Name} set it {Stopwatch.GetElapsedTime(theirs.LastSetTimestamp, now).TotalSeconds:0.000} s ago ({sets:N0} Sets by {theirs.Name}, {wakes:N0} wakes of {mine.Name}; lost wakeup)")
            : string.Create(c, $"no Set was due: {theirs.Name} has not set since {mine.Name}'s last wake ({sets:N0} Sets, {wakes:N0} wakes; {theirs.Name} is hung)");
        string pause = quiet.PauseRequested ? "; a memory pause is on" : "";
        return string.Create(c, $"event: {mine.Name} waited {Stopwatch.GetElapsedTime(start, now).TotalSeconds:0.0} s with no wake-up while the process ran " +
            $"(not running {hang.NotRunning(start, now).TotalSeconds:0.0} s of it): {due}; {theirs.Name}'s last step: {Describe(theirs.Step)}; " +
            $"{mine.Name}'s event is {(mine.Event.IsSet ? "set (a Wait missed a pending signal)" : "unset")}{pause}");
    }

    private static string Describe(PingPongStep step) => step switch
    {
        PingPongStep.Starting => "starting",
        PingPongStep.Waiting => "waiting on its own event",
        PingPongStep.Woken => "woken, about to pass the signal back",
        PingPongStep.Setting => "setting the partner's event",
        _ => "stopped",
    };

    /// <summary>Stops both loops: each waiter is woken and sees the stop.</summary>
    public void Stop()
    {
        _stop = true;
        Ping.Event.Set();
        Pong.Event.Set();
    }

    public void Dispose()
    {
        Ping.Event.Dispose();
        Pong.Event.Dispose();
    }

    /// <summary>One side: the event it waits on, its last step, its Sets (of the partner's event) and its wakes.</summary>
    internal sealed class Side(string name)
    {
        private int _step;
        private long _sets, _wakes, _lastSetTimestamp;

        public string Name { get; } = name;

        /// <summary>What a stall on this side's wait is recorded as.</summary>
        public string WaitName { get; } = $"event wait ({name})";

        /// <summary>The event this side waits on.</summary>
        public EconomicResetEvent Event { get; } = new();

        public PingPongStep Step
        {
            get => (PingPongStep)Volatile.Read(ref _step);
            set => Volatile.Write(ref _step, (int)value);
        }

        /// <summary>Sets of the partner's event that have returned.</summary>
        public long Sets => Volatile.Read(ref _sets);

        /// <summary>Waits on this side's event that returned true.</summary>
        public long Wakes => Volatile.Read(ref _wakes);

        /// <summary>When the last Set returned (a <see cref="Stopwatch"/> timestamp).</summary>
        public long LastSetTimestamp => Volatile.Read(ref _lastSetTimestamp);

        /// <summary>Passes the signal to <paramref name="partner"/>: sets its event and counts the Set.</summary>
        public void Pass(Side partner)
        {
            Step = PingPongStep.Setting;
            partner.Event.Set();
            CountSet();
        }

        /// <summary>Counts a Set of the partner's event (after it returned).</summary>
        internal void CountSet()
        {
            Volatile.Write(ref _lastSetTimestamp, Stopwatch.GetTimestamp());
            Volatile.Write(ref _sets, _sets + 1); // only this side's thread writes it
        }

        internal void CountWake() => Volatile.Write(ref _wakes, _wakes + 1); // only this side's thread writes it
    }
}

/// <summary>Where a ping-pong side last was.</summary>
internal enum PingPongStep
{
    Starting,
    Waiting,
    Woken,
    Setting,
    Stopped,
}
