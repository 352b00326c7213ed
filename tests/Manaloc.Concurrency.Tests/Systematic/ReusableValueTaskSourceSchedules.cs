using System.Threading.Tasks.Sources;
using Manaloc.Concurrency.Tests.Mutants;
using Manaloc.Threading;
using Microsoft.Coyote.Runtime;
using Microsoft.Coyote.Specifications;
using Monitor = System.Threading.Monitor;
using Xunit.Abstractions;

namespace Manaloc.Concurrency.Tests.Systematic;

/// <summary>What the scenario does to a reusable value-task source (the real one, or a broken one).</summary>
public interface IReusableSource : IValueTaskSource<int>
{
    short Version { get; }
    void SetResult(int result);
    void Reset();
}

/// <summary>
/// ReusableValueTaskSource under Coyote: a consumer follows an awaiter's protocol (status check,
/// then registration) while another thread completes, over two operations of one source. Its
/// logic is the BCL's ManualResetValueTaskSourceCore (not rewritten: its inside has no scheduling
/// points), so whole calls interleave: completion before the check, between the check and the
/// registration, or after the registration.
/// </summary>
public sealed class ReusableValueTaskSourceSchedules(ITestOutputHelper output)
{
    private sealed class Real(ReusableValueTaskSource<int> source) : IReusableSource
    {
        public short Version => source.Version;
        public void SetResult(int result) => source.SetResult(result);
        public void Reset() => source.Reset();
        public int GetResult(short token) => source.GetResult(token);
        public ValueTaskSourceStatus GetStatus(short token) => source.GetStatus(token);
        public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
            => source.OnCompleted(continuation, state, token, flags);
    }

    /// <summary>Counts the runs of one registered continuation and wakes the consumer.</summary>
    private sealed class Continuation
    {
        public int Runs;

        public static readonly Action<object?> Run = static state =>
        {
            var continuation = (Continuation)state!;
            lock (continuation)
            {
                continuation.Runs++;
                Specification.Assert(continuation.Runs == 1, "a continuation ran twice");
                Monitor.PulseAll(continuation);
            }
        };
    }

    // Where the completion landed, over all schedules: before the status check, between the check and
    // the registration, after the registration (the test asserts each happened).
    private static long s_beforeCheck, s_beforeRegistration, s_afterRegistration;

    // Invariants: no lost or doubled completion. A continuation registered while the operation is
    // pending runs exactly once, also when the completion lands between the consumer's status check
    // and its registration (a lost one leaves the consumer waiting: Coyote reports a deadlock); the
    // consumer reads the result its completer set; a token of an earlier operation is refused after
    // Reset, never answered with a later operation's result.
    internal static void ConsumerRacesCompletion(Func<IReusableSource> create)
    {
        var source = create();
        short firstToken = source.Version;
        for (int operation = 0; operation < 2; operation++)
        {
            if (operation > 0) source.Reset(); // the owner's part: only after the previous operation was consumed
            short token = source.Version;
            int expected = 100 + operation;
            bool completed = false; // plain: no scheduling point between SetResult and this store unless a continuation was registered
            var completer = new Thread(() =>
            {
                SchedulingPoint.Interleave();
                source.SetResult(expected);
                completed = true;
            });
            completer.Start();

            var continuation = new Continuation();
            bool registered = false;
            SchedulingPoint.Interleave();
            if (source.GetStatus(token) == ValueTaskSourceStatus.Pending)
            {
                SchedulingPoint.Interleave(); // the completion may land between the check and the registration
                registered = true;
                Interlocked.Increment(ref completed ? ref s_beforeRegistration : ref s_afterRegistration);
                // With UseSchedulingContext the source captures the current context, which under Coyote is its
                // controlled one, and posts the continuation there whether it completes before or after this call
                // (without it, it would run it inline or queue it to the thread pool, which Coyote does not control).
                source.OnCompleted(Continuation.Run, continuation, token, ValueTaskSourceOnCompletedFlags.UseSchedulingContext);
                lock (continuation)
                {
                    while (continuation.Runs == 0) Monitor.Wait(continuation);
                }
            }
            if (!registered) Interlocked.Increment(ref s_beforeCheck);
            Specification.Assert(source.GetResult(token) == expected, $"operation {operation}: the consumer read another result than its completer's");
            completer.Join();
            Specification.Assert(continuation.Runs == (registered ? 1 : 0), $"operation {operation}: the continuation ran {continuation.Runs} times");
        }
        bool refused = false;
        try
        {
            source.GetResult(firstToken);
        }
        catch (InvalidOperationException)
        {
            refused = true;
        }
        Specification.Assert(refused, "a token of the first operation read the second operation's result");
    }

    [CoyoteFact]
    public void Continuation_runs_once_whenever_completion_lands()
    {
        s_beforeCheck = s_beforeRegistration = s_afterRegistration = 0;
        Assert.Equal(0, Explorer.Explore(() => ConsumerRacesCompletion(() => new Real(new ReusableValueTaskSource<int>())), output).Bugs);
        string outcomes = $"{s_beforeCheck} before the check, {s_beforeRegistration} between the check and the registration, {s_afterRegistration} after the registration";
        output.WriteLine($"completions over all schedules: {outcomes}");
        Console.WriteLine($"coyote-outcomes value-task source: {outcomes}");
        Assert.True(s_beforeCheck > 0 && s_beforeRegistration > 0 && s_afterRegistration > 0, outcomes);
    }

    [CoyoteFact]
    public void Mutant_that_registers_without_a_recheck_is_caught()
    {
        var outcome = Explorer.Explore(() => ConsumerRacesCompletion(() => new NoRecheckValueTaskSource()), output);
        Assert.True(outcome.Bugs > 0, "Coyote did not find the broken source's lost continuation");
        Assert.Contains("eadlock", outcome.FirstBug);
    }
}
