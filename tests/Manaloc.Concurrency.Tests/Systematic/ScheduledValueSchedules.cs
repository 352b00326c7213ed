using Manaloc.Concurrency.Tests.Mutants;
using Manaloc.Threading;
using Microsoft.Coyote.Specifications;
using Xunit.Abstractions;

namespace Manaloc.Concurrency.Tests.Systematic;

/// <summary>A time provider whose one timer fires when the test says so (on whatever thread calls <see cref="Fire"/>).</summary>
public sealed class ManualTimerProvider : TimeProvider
{
    private TimerCallback? _callback;
    private object? _state;

    public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period)
    {
        _callback = callback;
        _state = state;
        return new Timer();
    }

    /// <summary>Runs the timer's callback, as a system timer would even after Dispose once the callback was queued.</summary>
    public void Fire() => _callback?.Invoke(_state);

    private sealed class Timer : ITimer
    {
        public bool Change(TimeSpan dueTime, TimeSpan period) => true;
        public void Dispose() { }
        public ValueTask DisposeAsync() => default;
    }
}

/// <summary>What the scenario reads from a scheduled value (the real one, or a broken one).</summary>
public interface IScheduledFlag : IDisposable
{
    bool Value { get; }
    bool IsFlipped { get; }
}

public sealed class ScheduledValueSchedules(ITestOutputHelper output)
{
    private sealed class Real(ScheduledValue<bool> value) : IScheduledFlag
    {
        public bool Value => value.Value;
        public bool IsFlipped => value.IsFlipped;
        public void Dispose() => value.Dispose();
    }

    // Invariants: Dispose racing the timer: exactly one wins, so a value disposed before its timer
    // callback started never flips; and a reader never sees the final value and then the initial one.
    internal static void DisposeRacesTimer(Func<ManualTimerProvider, IScheduledFlag> create)
    {
        var clock = new ManualTimerProvider();
        var value = create(clock);
        int disposed = 0;
        var timer = Task.Run(() =>
        {
            bool disposedFirst = Volatile.Read(ref disposed) == 1;
            clock.Fire();
            if (disposedFirst) Specification.Assert(!value.IsFlipped, "a value disposed before its timer fired flipped anyway");
        });
        var reader = Task.Run(() =>
        {
            bool first = value.Value;
            bool second = value.Value;
            Specification.Assert(!first || second, "a reader saw the final value, then the initial one");
        });
        value.Dispose();
        Volatile.Write(ref disposed, 1);
        timer.Wait(); // one by one: Task.WaitAll(params ReadOnlySpan<Task>) is newer than Coyote 1.7 and not intercepted
        reader.Wait();
        Specification.Assert(value.Value == value.IsFlipped, "Value and IsFlipped disagree at rest");
    }

    [CoyoteFact]
    public void Dispose_racing_the_timer_never_flips_late()
        => Assert.Equal(0, Explorer.Explore(() => DisposeRacesTimer(clock => new Real(new ScheduledValue<bool>(false, true, TimeSpan.FromSeconds(1), clock))), output).Bugs);

    [CoyoteFact]
    public void Mutant_whose_timer_stores_instead_of_compare_exchange_is_caught()
    {
        var outcome = Explorer.Explore(() => DisposeRacesTimer(clock => new FlipByStoreScheduledValue(clock)), output);
        Assert.True(outcome.Bugs > 0, "Coyote did not find the broken value's late flip");
        Assert.Contains("flipped anyway", outcome.FirstBug);
    }
}
