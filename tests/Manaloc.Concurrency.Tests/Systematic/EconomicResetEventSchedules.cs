using Manaloc.Concurrency.Tests.Mutants;
using Manaloc.Threading;
using Microsoft.Coyote.Specifications;
using Xunit.Abstractions;

namespace Manaloc.Concurrency.Tests.Systematic;

/// <summary>The few members of an auto-reset event the scenarios need (the real event, or a broken copy).</summary>
public interface ISignal
{
    void Set();
    void Wait();
    bool IsSet { get; }
}

/// <summary>
/// EconomicResetEvent under Coyote. Coyote intercepts the park's <c>WaitOne</c> (a blocked waiter
/// is a paused operation; a Set resumes it), so a lost wakeup shows as a deadlock Coyote reports.
/// Coyote 1.7 does not intercept <c>WaitHandle.WaitAny</c> and never fires a timed WaitOne's
/// timeout, so the withdraw paths (timeout, cancellation) are left to the stress tests.
/// </summary>
public sealed class EconomicResetEventSchedules(ITestOutputHelper output)
{
    private sealed class Real(EconomicResetEvent ev) : ISignal
    {
        public void Set() => ev.Set();
        public void Wait() => ev.Wait();
        public bool IsSet => ev.IsSet;
    }

    // Invariant: no lost wakeup. One Set races one blocking Wait at every Interlocked/Volatile
    // step of both; the Wait must return (else Coyote reports the deadlock) and consume the signal.
    internal static void SetRacesWait(Func<ISignal> create)
    {
        var ev = create();
        var setter = Task.Run(ev.Set);
        ev.Wait();
        setter.Wait();
        Specification.Assert(!ev.IsSet, "one Set was both consumed and left pending");
    }

    // Invariant: no lost wakeup with two producers. Each publishes an item then Sets; the consumer
    // drains and Waits only when it finds nothing; it must receive both items (a lost wakeup leaves
    // it blocked: Coyote reports the deadlock), and no item is counted twice.
    internal static void TwoProducersOneConsumer(Func<ISignal> create)
    {
        var ev = create();
        int queued = 0;
        var producers = new[] { Task.Run(() => { Interlocked.Increment(ref queued); ev.Set(); }), Task.Run(() => { Interlocked.Increment(ref queued); ev.Set(); }) };
        int taken = 0;
        while (taken < 2)
        {
            int n = Interlocked.Exchange(ref queued, 0);
            if (n > 0) taken += n;
            else ev.Wait();
        }
        Task.WaitAll(producers);
        Specification.Assert(taken == 2 && Volatile.Read(ref queued) == 0, "items counted twice");
    }

    private static ISignal CreateReal(int spinCount) => new Real(new EconomicResetEvent(spinCount: spinCount));

    [CoyoteFact]
    public void No_lost_wakeup_when_Set_races_Wait() => Assert.Equal(0, Explorer.Explore(() => SetRacesWait(() => CreateReal(1)), output).Bugs);

    [CoyoteFact]
    public void No_lost_wakeup_with_two_producers() => Assert.Equal(0, Explorer.Explore(() => TwoProducersOneConsumer(() => CreateReal(0)), output).Bugs);

    [CoyoteFact]
    public void Mutant_whose_Set_stores_instead_of_compare_exchange_is_caught()
    {
        var outcome = Explorer.Explore(() => TwoProducersOneConsumer(() => new SetByStoreResetEvent()), output);
        Assert.True(outcome.Bugs > 0, "Coyote did not find the lost wakeup in the broken event");
        Assert.Contains("eadlock", outcome.FirstBug);
    }
}
