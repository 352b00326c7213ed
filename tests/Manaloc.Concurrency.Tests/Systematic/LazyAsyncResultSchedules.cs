using Manaloc.Concurrency.Tests.Mutants;
using Manaloc.Threading;
using Microsoft.Coyote.Specifications;
using Xunit.Abstractions;

namespace Manaloc.Concurrency.Tests.Systematic;

/// <summary>What the scenario does to an async result (the real one, or a broken one).</summary>
public interface IAsyncCompletion
{
    void Complete(int result);
    WaitHandle Handle { get; }
    int End();
}

/// <summary>LazyAsyncResult under Coyote (ReusableValueTaskSource: ReusableValueTaskSourceSchedules).</summary>
public sealed class LazyAsyncResultSchedules(ITestOutputHelper output)
{
    private sealed class Real(LazyAsyncResult<int> result) : IAsyncCompletion
    {
        public void Complete(int value) => result.SetResult(value);
        public WaitHandle Handle => result.AsyncWaitHandle;
        public int End() => result.End();
    }

    // Invariant: no lost wakeup. The wait handle is created lazily while another thread completes:
    // whichever wins, the handle ends up signalled (a waiter on it returns; Coyote reports a
    // deadlock if it never does) and End returns the completer's result.
    internal static void HandleRacesCompletion(Func<IAsyncCompletion> create)
    {
        var result = create();
        var completer = Task.Run(() => result.Complete(42));
        var handle = result.Handle;
        handle.WaitOne();
        Specification.Assert(result.End() == 42, "End returned another result than the completer's");
        completer.Wait();
    }

    [CoyoteFact]
    public void Handle_created_while_completing_is_always_signalled()
        => Assert.Equal(0, Explorer.Explore(() => HandleRacesCompletion(() => new Real(new LazyAsyncResult<int>(null, null))), output).Bugs);

    [CoyoteFact]
    public void Mutant_that_reads_the_handle_before_publishing_completion_is_caught()
    {
        var outcome = Explorer.Explore(() => HandleRacesCompletion(() => new HandleFirstAsyncResult()), output);
        Assert.True(outcome.Bugs > 0, "Coyote did not find the broken result's lost wakeup");
        Assert.Contains("eadlock", outcome.FirstBug);
    }
}
