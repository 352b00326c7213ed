using System.Runtime;

namespace Manaloc.Lab.Harness;

/// <summary>
/// The JIT warm-up an experiment needs before the harness's short quick-mode warm-up: code reached only in some cells
/// (a lock's contended path, a library method inlined into one body) must run optimised code from the first cell on, or
/// the first cells measure tier-0 code and flatter or punish whichever variant comes first. Rounds of a few dozen calls
/// of every body, each round followed by a pause that lets the background tier-1 compiles in
/// (<see cref="RunSettings.TierUpPause"/>: the runtime's call-counting delay and the compile, or the compile alone in a lab child).
/// </summary>
/// <remarks>Stateless; runs on the calling thread. Skipped in smoke mode, whose figures mean nothing.</remarks>
public static class TierUp
{
    /// <summary>
    /// Calls every body <paramref name="calls"/> times per round, for <paramref name="rounds"/> rounds, each followed by the
    /// tier-up pause; with <paramref name="untilNothingCompiles"/>, goes on (up to <see cref="MaxRounds"/>) until a round
    /// and its pause compiled no method at all.
    /// </summary>
    /// <param name="context">Gives the mode (smoke skips the pauses), the status line and the cancellation.</param>
    /// <param name="bodies">What to bring to tier 1; each call should be short (a few hundred operations).</param>
    /// <param name="rounds">Rounds of calls, each followed by a pause (2 reaches tier 1 through the instrumented tier).</param>
    /// <param name="calls">Calls of every body per round (above the runtime's 30-call threshold).</param>
    /// <param name="afterRound">Runs after each round's calls, before its pause (e.g. frees what the calls allocated).</param>
    /// <param name="untilNothingCompiles">
    /// Why: two rounds reach tier 1 only if each round's compiles are in by the end of its pause. Dozens of bodies whose
    /// callees tier up through the instrumented tier queue dozens of compiles on the runtime's one background compiler,
    /// which on a busy or small machine takes longer than the pause: the first measured rounds then run instrumented or
    /// on-stack-replaced code and are slower than the rest. Every call of a method below its final tier counts towards its
    /// next compile, so a round of <paramref name="calls"/> calls of every body in which the process compiled nothing
    /// (<see cref="JitInfo.GetCompiledMethodCount"/>, every thread) left every method those bodies reach at its final tier.
    /// </param>
    /// <returns>The rounds run.</returns>
    public static int Run(ExperimentContext context, IReadOnlyList<Action> bodies, int rounds = 2, int calls = 40, Action? afterRound = null, bool untilNothingCompiles = false)
    {
        ArgumentNullException.ThrowIfNull(context);
        ArgumentNullException.ThrowIfNull(bodies);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(rounds);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(calls);
        context.Status("warming up the JIT");
        for (int round = 0; ; round++)
        {
            long compiledBefore = JitInfo.GetCompiledMethodCount();
            for (int call = 0; call < calls; call++)
            {
                foreach (var body in bodies)
                {
                    context.Cancellation.ThrowIfCancellationRequested();
                    body();
                }
            }
            afterRound?.Invoke();
            if (!context.IsSmoke) Thread.Sleep(RunSettings.TierUpPause); // until the hot methods' tier-1 code is in
            if (round + 1 < rounds) continue;
            if (!untilNothingCompiles || context.IsSmoke || round + 1 >= MaxRounds || JitInfo.GetCompiledMethodCount() == compiledBefore) return round + 1;
        }
    }

    /// <summary>The most rounds <see cref="Run"/> takes waiting for a round that compiles nothing (another thread's compiles also count: this bounds the wait).</summary>
    public const int MaxRounds = 10;
}
