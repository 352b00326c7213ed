using System.Reflection;
using System.Runtime.CompilerServices;
using Microsoft.Coyote;
using Microsoft.Coyote.SystematicTesting;
using Xunit.Abstractions;

namespace Manaloc.Concurrency.Tests.Systematic;

/// <summary>
/// Runs a scenario under Coyote's systematic scheduler: every run is one schedule chosen by the
/// strategy, with scheduling points at every task/thread operation, lock, Interlocked and Volatile
/// call in the rewritten assemblies (this test assembly and Manaloc.dll).
/// </summary>
internal static class Explorer
{
    /// <summary>True when this assembly went through <c>coyote rewrite</c> (.ci/steps/30-coyote.sh does it).</summary>
    public static bool IsRewritten { get; } = typeof(Explorer).Assembly.GetCustomAttributes()
        .Any(a => a.GetType().FullName == "Microsoft.Coyote.Rewriting.RewritingSignatureAttribute");

    /// <summary>Schedules per test: COYOTE_ITERATIONS overrides the CI figure of 10,000.</summary>
    public static int Iterations { get; } =
        int.TryParse(Environment.GetEnvironmentVariable("COYOTE_ITERATIONS"), out int n) && n > 0 ? n : 10_000;

    /// <summary>Explores <paramref name="iterations"/> schedules of <paramref name="scenario"/>; returns the report.</summary>
    /// <param name="libraryAtomics">Scheduling points at every Interlocked and Volatile call. Off for code that
    /// holds a <see cref="System.Threading.Lock"/> across such calls: Coyote 1.7 does not intercept that lock, so a
    /// switch inside it would block the next thread for real (Coyote reports a hang). Then the scheduling
    /// points are the test's own steps, thread start/join and Monitor calls: whole operations interleave.</param>
    public static Outcome Explore(Action scenario, ITestOutputHelper output, int? iterations = null, int maxSteps = 2_000, bool libraryAtomics = true, bool noRepro = false, [CallerMemberName] string test = "")
    {
        var configuration = Configuration.Create()
            .WithTestingIterations((uint)(iterations ?? Iterations))
            .WithMaxSchedulingSteps((uint)maxSteps)
            .WithRandomStrategy()
            .WithAtomicOperationRaceCheckingEnabled(libraryAtomics)
            .WithVolatileOperationRaceCheckingEnabled(libraryAtomics)
            .WithCollectionAccessRaceCheckingEnabled(libraryAtomics)
            .WithLockAccessRaceCheckingEnabled(true)
            .WithPartiallyControlledConcurrencyAllowed(false)
            .WithNoBugTraceRepro(noRepro)
            .WithTelemetryEnabled(false)
            .WithConsoleLoggingEnabled(Environment.GetEnvironmentVariable("COYOTE_VERBOSE") == "1")
            .WithVerbosityEnabled(Environment.GetEnvironmentVariable("COYOTE_VERBOSE") == "1" ? Microsoft.Coyote.Logging.VerbosityLevel.Exhaustive : Microsoft.Coyote.Logging.VerbosityLevel.None);
        using var engine = TestingEngine.Create(configuration, scenario);
        engine.Run();
        var report = engine.TestReport;
        if (report.NumOfFoundBugs > 0 && Environment.GetEnvironmentVariable("COYOTE_TRACE_DIR") is { Length: > 0 } traceDir)
        {
            Directory.CreateDirectory(traceDir);
            engine.TryEmitReports(traceDir, test, out _);
        }
        var outcome = new Outcome(
            Schedules: report.NumOfExploredUnfairPaths + report.NumOfExploredFairPaths,
            Bugs: report.NumOfFoundBugs,
            FirstBug: report.BugReports.FirstOrDefault() ?? "");
        output.WriteLine($"coyote: {outcome.Schedules} schedules explored, {outcome.Bugs} bug(s). {outcome.FirstBug}");
        Console.WriteLine($"coyote-schedules {test} {outcome.Schedules} bugs={outcome.Bugs}");
        return outcome;
    }

    /// <summary>What one exploration found.</summary>
    public readonly record struct Outcome(int Schedules, int Bugs, string FirstBug);
}

/// <summary>A fact that needs Coyote's rewritten assemblies; skipped (with the reason) in a plain <c>dotnet test</c>.</summary>
public sealed class CoyoteFactAttribute : FactAttribute
{
    /// <summary>Sets <see cref="FactAttribute.Skip"/> unless the assembly is rewritten.</summary>
    public CoyoteFactAttribute()
    {
        if (!Explorer.IsRewritten) Skip = "needs `coyote rewrite` (run .ci/steps/30-coyote.sh; see docs/concurrency-testing.md)";
    }
}
