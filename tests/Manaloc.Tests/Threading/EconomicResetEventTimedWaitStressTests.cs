using System.Diagnostics;
using System.Globalization;
using Manaloc.Threading;
using Xunit.Abstractions;

namespace Manaloc.Tests.Threading;

/// <summary>
/// Timed waits racing Sets, on the system clock: two threads pass one signal back and forth, each
/// waiting for it with short random timeouts (a few µs to a few ms, looping on false) while the
/// partner waits a random few µs before its Set. So a Set lands, again and again, just as a waiter's
/// due time passes: during its spin, between its claim of the Waiting state and its withdrawal,
/// or while its kernel wait times out. Invariant: every Set is consumed exactly once, by one Wait
/// that returns true: none lost (the pair would stop, caught by the watchdog), none duplicated (a
/// second signal pending after a wake), none seen before the writes that preceded it.
/// </summary>
/// <remarks>Each case runs for <c>MANALOC_TIMED_WAIT_STRESS_SECONDS</c> seconds (default 5). With the default spin most
/// short timeouts pass during the spin; with no spin the waiter claims Waiting at once and a timeout of a few µs
/// withdraws right away, which is where a Set and a withdrawal race hardest.</remarks>
public sealed class EconomicResetEventTimedWaitStressTests(ITestOutputHelper output)
{
    private sealed class Side(string name, long firstHandOff, int spinCount)
    {
        public readonly string Name = name;
        public readonly EconomicResetEvent Event = new(spinCount: spinCount); // on TimeProvider.System
        public long Wakes, Timeouts, LateWakes, Duplicates, OutOfOrder, Sets;
        public long ExpectedHandOff = firstHandOff;
    }

    private long _handOff; // written by the side holding the signal, before its Set; read by the side it wakes
    private volatile bool _stop;

    [Theory]
    [InlineData(EconomicResetEvent.DefaultSpinCount)]
    [InlineData(0)]
    public void Timed_waits_racing_sets_consume_every_signal_exactly_once(int spinCount)
    {
        var budget = TimeSpan.FromSeconds(double.TryParse(Environment.GetEnvironmentVariable("MANALOC_TIMED_WAIT_STRESS_SECONDS"), NumberStyles.Float, CultureInfo.InvariantCulture, out double s) && s > 0 ? s : 5);
        var ping = new Side("ping", firstHandOff: 2, spinCount);
        var pong = new Side("pong", firstHandOff: 1, spinCount);
        long blockedBefore = EconomicResetEvent.BlockedWaits;
        var errors = new List<Exception>();
        var clock = Stopwatch.StartNew();
        Pass(ping, pong, new Random(1)); // ping holds the signal first
        var threads = new[]
        {
            EventTestSupport.Start(() => Run(ping, pong, new Random(2)), errors, "ping"),
            EventTestSupport.Start(() => Run(pong, ping, new Random(3)), errors, "pong"),
            EventTestSupport.Start(() => { Thread.Sleep(budget); _stop = true; }, errors, "timer"),
        };
        EventTestSupport.JoinWithWatchdog(threads, () => Volatile.Read(ref ping.Wakes) + Volatile.Read(ref pong.Wakes) + (_stop ? 1 : 0),
            () => $"{Describe(ping)}; {Describe(pong)}");
        // Both sides stop at a wake; the last signal passed may still be pending in one event, none in the other.
        long pending = (ping.Event.Wait(0) ? 1 : 0) + (pong.Event.Wait(0) ? 1 : 0);

        output.WriteLine($"spin {spinCount}: {ping.Wakes + pong.Wakes:N0} hand-offs in {clock.Elapsed.TotalSeconds:0.0} s; {ping.Timeouts + pong.Timeouts:N0} timed-out waits; " +
            $"{ping.LateWakes + pong.LateWakes:N0} waits that returned true at or after their due time (the Set landed after the timeout had passed); " +
            $"{EconomicResetEvent.BlockedWaits - blockedBefore:N0} waits claimed the Waiting state (all tests in the process)");
        Assert.Empty(errors);
        Assert.Equal(0, ping.Duplicates + pong.Duplicates);
        Assert.Equal(0, ping.OutOfOrder + pong.OutOfOrder);
        Assert.True(ping.Wakes + pong.Wakes > 0 && ping.Timeouts + pong.Timeouts > 0, "the pair should have passed the signal and timed out");
        // Every Set consumed exactly once: each side's wakes equal the partner's Sets, but for one still pending at the end.
        Assert.Equal(ping.Sets + pong.Sets, ping.Wakes + pong.Wakes + pending);
        Assert.InRange(pending, 0, 1);
        ping.Event.Dispose();
        pong.Event.Dispose();
    }

    private void Run(Side mine, Side theirs, Random random)
    {
        while (!_stop)
        {
            while (true)
            {
                var timeout = RandomTimeout(random);
                long start = Stopwatch.GetTimestamp();
                if (mine.Event.Wait(timeout))
                {
                    if (Stopwatch.GetElapsedTime(start) >= timeout) mine.LateWakes++;
                    break;
                }
                mine.Timeouts++;
                if (_stop) return;
            }
            Volatile.Write(ref mine.Wakes, mine.Wakes + 1);
            // The partner sets again only after this side passes the signal back: anything pending now is a duplicate.
            if (mine.Event.Wait(TimeSpan.Zero)) mine.Duplicates++;
            // Plain read: the Set's fence and the Wait's must make the partner's write visible.
            if (_handOff != mine.ExpectedHandOff) mine.OutOfOrder++;
            mine.ExpectedHandOff += 2;
            if (_stop) return;
            Pass(mine, theirs, random);
        }
    }

    private void Pass(Side mine, Side theirs, Random random)
    {
        long spinUntil = Stopwatch.GetTimestamp() + (long)(random.NextDouble() * 60e-6 * Stopwatch.Frequency); // 0-60 µs
        while (Stopwatch.GetTimestamp() < spinUntil) Thread.SpinWait(4);
        _handOff++; // plain write: published by the Set below
        theirs.Event.Set();
        mine.Sets++;
    }

    /// <summary>Mostly shorter than the event's spin (the waiter claims Waiting and withdraws at once), some around it, some long enough to block in the kernel.</summary>
    private static TimeSpan RandomTimeout(Random random) => random.Next(10) switch
    {
        < 5 => TimeSpan.FromTicks(random.Next(1, 200)),      // 0.1-20 µs
        < 9 => TimeSpan.FromTicks(random.Next(200, 2_000)),  // 20-200 µs
        _ => TimeSpan.FromTicks(random.Next(2_000, 30_000)), // 0.2-3 ms
    };

    private static string Describe(Side side)
        => $"{side.Name}: {Volatile.Read(ref side.Wakes):N0} wakes, {side.Sets:N0} sets, {side.Timeouts:N0} timeouts, event set {side.Event.IsSet}, waiter blocked {side.Event.HasBlockedWaiter}";
}
